/**
 * The per-page cap of a search: at most `perPage` hits from one page, so that one long page cannot crowd out the
 * rest. Every index backend and vector store selects its hits through these.
 */

/** Counts the hits taken from each page: take(pageId) is false once that page has `perPage`, else counts one more. */
export class PageCap {
  private readonly used = new Map<number, number>();

  constructor(private readonly perPage: number) {}

  take(pageId: number): boolean {
    const n = this.used.get(pageId) ?? 0;
    if (n >= this.perPage) return false;
    this.used.set(pageId, n + 1);
    return true;
  }
}

/** Takes items best first, at most `perPage` from one page (`pageOf`), until `limit` are taken. */
export function selectPerPage<T>(items: readonly T[], limit: number, perPage: number, pageOf: (item: T) => number): T[] {
  const cap = new PageCap(perPage);
  const out: T[] = [];
  for (const item of items) {
    if (out.length >= limit) break;
    if (cap.take(pageOf(item))) out.push(item);
  }
  return out;
}
