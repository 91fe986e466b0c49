/** Writes this process made, by what they wrote to (a database file): a memo held from before the latest reads again. */
const localWrites = new Map<string, number>();

/** Records a write to `key` (a database file) by this process: every TurnMemo of `key` reads afresh next time. */
export function noteLocalWrite(key: string): void {
  localWrites.set(key, (localWrites.get(key) ?? 0) + 1);
}

/**
 * A value read at most once per turn of the event loop: a write stamp that several steps of one search (and the
 * searches answered in the same turn) each asked the database for. A write by this process (noteLocalWrite) is seen at
 * once; a write by another process from the next turn on, as if the read had come a moment earlier.
 */
export class TurnMemo<T> {
  private held: { value: T; writes: number } | null = null;

  constructor(
    private readonly key: string,
    private readonly read: () => T,
  ) {}

  get(): T {
    const writes = localWrites.get(this.key) ?? 0;
    const held = this.held;
    if (held && held.writes === writes) return held.value;
    const value = this.read();
    this.held = { value, writes };
    if (!held) setImmediate(() => (this.held = null)).unref();
    return value;
  }
}
