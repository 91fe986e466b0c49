import { describe, expect, it } from 'vitest';
import { isNotaryError } from '../core/errors.js';
import { normalizeQuery } from './query.js';

function refusal(raw: string): string {
  try {
    normalizeQuery(raw, 50);
  } catch (err) {
    if (isNotaryError(err)) return `${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('normalizeQuery', () => {
  it('keeps real queries, trimmed, with invisible characters removed', () => {
    expect(normalizeQuery('  vacuum full  ', 50)).toBe('vacuum full');
    expect(normalizeQuery('vac\u200Buum', 50)).toBe('vacuum');
    expect(normalizeQuery('\uFEFFpg_class', 50)).toBe('pg_class');
    expect(normalizeQuery('Ünïcödé 日本語 42', 50)).toBe('Ünïcödé 日本語 42');
    expect(normalizeQuery('"exact phrase"', 50)).toBe('"exact phrase"');
  });

  it('refuses queries that are empty in effect, with invalid_request', () => {
    expect(refusal('\u0000')).toMatch(/^invalid_request: .*control character/);
    expect(refusal('abc\u0000')).toMatch(/control character/);
    expect(refusal('\uD800')).toMatch(/unpaired UTF-16 surrogate/);
    expect(refusal('a\uDC00b')).toMatch(/unpaired/);
    expect(refusal('\u200B\u200C\u200D\u2060\uFEFF')).toMatch(/letter or digit/);
    expect(refusal('"')).toMatch(/letter or digit/);
    expect(refusal(' \t\n ')).toMatch(/letter or digit/);
    expect(refusal('?!*')).toMatch(/letter or digit/);
    expect(refusal('x'.repeat(51))).toMatch(/at most 50/);
  });
});
