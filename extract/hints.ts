import type { Element } from './html-tree.js';

/**
 * Class and id hints read as words rather than substrings: "article-body__text has-ads" is the tokens
 * ["article", "body", "text"] and ["has", "ads"]; "ArticleAds" is ["article", "ads"]; "LoadsOfText" is
 * ["loads", "of", "text"] and holds no "ads" at all.
 */
const tokenCache = new WeakMap<Element, string[][]>();

function wordsOfToken(token: string): string[] {
  return token
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** The class and id tokens of an element, each as its words. */
export function hintTokens(el: Element): string[][] {
  let tokens = tokenCache.get(el);
  if (!tokens) {
    const raw = `${el.attrs['class'] ?? ''} ${el.attrs['id'] ?? ''}`;
    tokens = raw
      .split(/\s+/)
      .filter(Boolean)
      .map(wordsOfToken)
      .filter((words) => words.length > 0);
    tokenCache.set(el, tokens);
  }
  return tokens;
}

const AD_WORDS = new Set(['ad', 'ads', 'advert', 'adverts', 'advertisement', 'advertisements', 'advertising', 'adsense', 'adsbygoogle', 'adslot', 'adunit', 'dfp']);
/** Words that make a token about something else than being an ad: "has-ads", "no-ads", "ad-free", "withAds". */
const AD_QUALIFIERS = new Set(['has', 'with', 'no', 'without', 'free', 'less', 'after', 'before', 'between', 'block', 'blocker', 'disabled', 'off']);

/** Words that may follow an ad word in the name of an ad's box: "ad-slot", "article-ad-container", "ad-top-2". */
const AD_PLACE_WORDS = new Set([
  'slot', 'container', 'wrapper', 'wrap', 'unit', 'box', 'block', 'banner', 'label', 'space', 'zone', 'placeholder',
  'holder', 'area', 'region', 'inline', 'top', 'bottom', 'mid', 'middle', 'leaderboard', 'sidebar', 'rail', 'mpu',
  'native', 'sticky', 'row', 'inner', 'outer', 'content',
]);

/**
 * Whether a class/id token names an advertisement: it starts with an ad word ("ad-slot", "adsbygoogle"), or an ad
 * word is followed only by words for its box ("ArticleAds", "article-ad-container"); not when the token is qualified
 * into something else ("has-ads", "ads-free", "withAds") or holds "ad" only inside another word.
 */
function isAdToken(words: readonly string[]): boolean {
  if (words.some((w) => AD_QUALIFIERS.has(w))) return false;
  const at = words.findIndex((w) => AD_WORDS.has(w));
  if (at < 0) return false;
  return at === 0 || words.slice(at + 1).every((w) => AD_PLACE_WORDS.has(w) || /^\d+$/.test(w));
}

/**
 * Cheap test before splitting hints into words: an ad word ("ad…" or "dfp") can only start a word at the start of a
 * token, after a separator, or at a capital letter after a letter or digit ("ArticleAds", "HTMLAds"), and go on with
 * a separator, a capital, "s", "u" or "v" (ads, adunit, advert) or nothing. "header", "address", "admin" and
 * "ad300" need no splitting.
 */
const MAY_NAME_AD = /(?:(?:^|[^A-Za-z0-9])(?:[aA][dD]|[dD][fF][pP])|[A-Za-z0-9](?:A[dD]|D[fF][pP]))(?![a-rtw-z0-9])/;

export function hasAdHint(el: Element): boolean {
  const cls = el.attrs['class'];
  const id = el.attrs['id'];
  if (!(cls !== undefined && MAY_NAME_AD.test(cls)) && !(id !== undefined && MAY_NAME_AD.test(id))) return false;
  return hintTokens(el).some(isAdToken);
}

/** Class tokens that hide an element (not "field-label-hidden", which hides a label, nor "hidden-xs", one screen size). */
const HIDING_CLASSES = new Set(['hidden', 'hide', 'is-hidden', 'u-hidden', 'd-none', 'invisible', 'is-invisible', 'element-hidden', 'element-invisible', 'js-hidden', 'display-none']);

const MAY_HIDE = /hid|invisible|none/i;

export function hasHidingClass(el: Element): boolean {
  const cls = el.attrs['class'];
  if (!cls || !MAY_HIDE.test(cls)) return false;
  return cls.split(/\s+/).some((token) => HIDING_CLASSES.has(token.toLowerCase()));
}

/** Hints of comment threads; on a forum or Q&A page the posts carrying them are the content. */
export const COMMENT_HINT = /comment|replies|remark/i;
