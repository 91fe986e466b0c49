import { describe, expect, it } from 'vitest';
import { hasAdHint, hasHidingClass, hintTokens } from './hints.js';
import type { Element } from './html-tree.js';

function el(cls: string, id?: string): Element {
  return { tag: 'div', attrs: { class: cls, ...(id ? { id } : {}) }, children: [], parent: null };
}

describe('class hints read as words', () => {
  it('splits tokens on separators and camelCase', () => {
    expect(hintTokens(el('article-body__text hasAds', 'LoadsOfText'))).toEqual([['article', 'body', 'text'], ['has', 'ads'], ['loads', 'of', 'text']]);
  });

  it('names ads by a head or tail ad word, not by "ads" inside other words or qualified away', () => {
    for (const cls of ['ad-slot', 'ArticleAds', 'adsbygoogle', 'article-ad-container', 'leaderboard-ad', 'ad-top-2', 'advertisement']) {
      expect(hasAdHint(el(cls)), cls).toBe(true);
    }
    for (const cls of ['has-ads', 'withAds', 'ads-free', 'no-ads', 'threads', 'downloads', 'LoadsOfText', 'headline', 'road-map']) {
      expect(hasAdHint(el(cls)), cls).toBe(false);
    }
  });

  it('hides only with classes that hide the element itself', () => {
    for (const cls of ['hidden', 'is-hidden', 'd-none', 'element-invisible']) expect(hasHidingClass(el(`box ${cls}`)), cls).toBe(true);
    for (const cls of ['field-label-hidden', 'hidden-xs', 'hide-for-small-only', 'overflow-hidden']) expect(hasHidingClass(el(cls)), cls).toBe(false);
  });
});
