import { describe, expect, it } from 'vitest';
import { noteLocalWrite, TurnMemo } from './turn-memo.js';

describe('TurnMemo', () => {
  it('reads once a turn, again after a turn or a write of this process to the same key', async () => {
    let stored = 1;
    let reads = 0;
    const memo = new TurnMemo('db-a', () => {
      reads++;
      return stored;
    });
    expect([memo.get(), memo.get(), memo.get()]).toEqual([1, 1, 1]);
    expect(reads).toBe(1);
    stored = 2; // another process wrote: seen from the next turn
    await Promise.resolve();
    expect(memo.get()).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(memo.get()).toBe(2);
    expect(reads).toBe(2);
    stored = 3;
    noteLocalWrite('db-b'); // another file: no effect
    expect(memo.get()).toBe(2);
    noteLocalWrite('db-a'); // this process wrote: seen at once
    expect(memo.get()).toBe(3);
    expect(memo.get()).toBe(3);
    expect(reads).toBe(3);
  });
});
