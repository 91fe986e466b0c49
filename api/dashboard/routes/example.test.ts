import { describe, expect, it } from 'vitest';
import { exampleQuery } from './example.js';

describe("the Quick start's example query", () => {
  it("is the name of an indexed page, without its site's name", () => {
    expect(exampleQuery(['Trimming the lamp wicks | Keeper handbook'])).toBe('Trimming the lamp wicks');
    expect(exampleQuery(['Install — Docs'])).toBe('Install');
    expect(exampleQuery(['PostgreSQL: Documentation'])).toBe('PostgreSQL: Documentation');
    expect(exampleQuery(['Re-indexing - Operations'])).toBe('Re-indexing');
  });

  it('prefers a title of two to eight words', () => {
    expect(exampleQuery(['Home', 'A'.repeat(120), 'Sounding the   fog horn'])).toBe('Sounding the fog horn');
    expect(exampleQuery(['Home'])).toBe('Home');
  });

  it('is null while nothing is indexed', () => {
    expect(exampleQuery([])).toBeNull();
    expect(exampleQuery(['', '  '])).toBeNull();
  });
});
