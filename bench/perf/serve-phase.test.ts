import { describe, expect, it } from 'vitest';
import { distinctQueries } from './serve-phase.js';

describe('distinctQueries', () => {
  it('keeps each query once, then adds variants with a word of another query, none repeating', () => {
    const base = ['create index', 'vacuum full', '::', 'create index', 'logical replication slots', 'pg_dump archive format', 'window functions'];
    const out = distinctQueries(base);
    expect(new Set(out).size).toBe(out.length);
    expect(out.slice(0, 5)).toEqual(['create index', 'vacuum full', 'logical replication slots', 'pg_dump archive format', 'window functions']);
    expect(out.length).toBeGreaterThan(5);
    for (const variant of out.slice(5)) {
      const [first, ...rest] = variant.split(' ');
      expect(base.some((q) => variant.startsWith(`${q} `))).toBe(true);
      expect(first).toBeTruthy();
      expect(rest.length).toBeGreaterThan(0);
    }
  });
});
