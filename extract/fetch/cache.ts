/** A small in-memory LRU of fetched documents keyed by URL, each entry stamped with when it was fetched. */
export class FetchCache<T> {
  private readonly entries = new Map<string, { value: T; storedAt: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The entry when it is at most `maxAgeS` seconds old; 0 (or less) always misses. */
  get(key: string, maxAgeS: number): T | undefined {
    if (maxAgeS <= 0) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt > maxAgeS * 1000) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: T): void {
    if (this.maxEntries <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, storedAt: this.now() });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
