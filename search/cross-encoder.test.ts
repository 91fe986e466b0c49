import { describe, expect, it } from 'vitest';
import { crossEncoderText, queryWindow } from './cross-encoder.js';

const filler = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

describe('queryWindow', () => {
  it('keeps a text no longer than the window, and the whole text with window 0', () => {
    expect(queryWindow('vacuum  reclaims\nstorage', 'vacuum', 5)).toBe('vacuum reclaims storage');
    const long = `${filler(100, 'a')} vacuum`;
    expect(queryWindow(long, 'vacuum', 0)).toBe(long);
  });

  it('takes the window with the most distinct query words (stemmed), not the most repeats of one', () => {
    const text = `${filler(30, 'a')} vacuum vacuum vacuum vacuum ${filler(30, 'b')} vacuuming reclaims storage ${filler(30, 'c')}`;
    const window = queryWindow(text, 'how does vacuum reclaim storage', 10);
    expect(window.split(' ')).toHaveLength(10);
    expect(window).toContain('vacuuming reclaims storage');
  });

  it('starts at the beginning when no query word occurs', () => {
    expect(queryWindow(filler(50, 'x'), 'vacuum', 4)).toBe('x0 x1 x2 x3');
  });
});

describe('crossEncoderText', () => {
  it('puts where the passage is (title, headings) before its window', () => {
    expect(crossEncoderText({ title: 'Routine Vacuuming', headingPath: '', text: 'dead rows' }, 'vacuum', 60)).toBe('Routine Vacuuming. dead rows');
    expect(crossEncoderText({ title: 'T', headingPath: 'A > B', text: 'dead rows' }, 'vacuum', 60)).toBe('T — A > B. dead rows');
  });
});
