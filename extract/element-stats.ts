import type { Element, ElementStats } from './html-tree.js';
import { INLINE_TAGS, WRAPPER_TAGS, countCommas, hintsOf, visibleLength } from './element-text.js';

/** Elements whose own text counts as a paragraph when scoring containers. */
const SCORED_TAGS = new Set(['p', 'pre', 'td', 'blockquote', 'dd', 'li']);

const BOILERPLATE_TAGS = new Set(['nav', 'aside', 'footer', 'dialog', 'menu']);
const BOILERPLATE_ROLES = new Set([
  'navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog', 'menu', 'menubar',
  'tablist', 'toolbar', 'tooltip',
]);
/** class/id hints that always mean boilerplate. */
const ALWAYS_BOILERPLATE =
  /(?:^|\s)nav|[-_]nav(?:$|[\s_-])|navbar|navigation|cookie|consent|gdpr|breadcrumb|skip-?(?:link|nav|to)|sr-only|visually-hidden|screen-reader-text|popup|modal|newsletter/i;
/** Readability's "unlikely candidates": dropped on the first pass unless a positive hint is also present. */
const UNLIKELY =
  /-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|yom-remote|share|toolbar|masthead/i;
const META_LINE =
  /byline|dateline|timestamp|(?:^|[-_\s])(?:date|time|author|authors|updated|published|credit|credits|caption)(?:$|[-_\s])|post-?meta|entry-meta|article-meta|share|social/i;
const MAYBE_CONTENT = /article|body|column|content|main|mathjax|shadow|post|entry|story/i;

function isHidden(el: Element): boolean {
  const attrs = el.attrs;
  if ('hidden' in attrs || attrs['aria-hidden'] === 'true') return true;
  const style = attrs['style'];
  return style !== undefined && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style);
}

export interface WalkContext {
  strict: boolean;
  inArticle: boolean;
  inTable: boolean;
}

/** Boilerplate by tag, role or visibility: certain whatever the element holds. */
function isStructuralBoilerplate(el: Element, ctx: WalkContext): boolean {
  const tag = el.tag;
  if (tag === 'body' || tag === 'a') return false;
  if (BOILERPLATE_TAGS.has(tag)) return true;
  if (tag === 'header' && !ctx.inArticle) return true;
  // Photo captions and credits are not part of an article's running text.
  if (tag === 'figcaption') return true;
  if (tag === 'input' || (tag === 'form' && /search/i.test(hintsOf(el) + (el.attrs['role'] ?? '')))) return true;
  const role = el.attrs['role'];
  if (role !== undefined && BOILERPLATE_ROLES.has(role)) return true;
  return isHidden(el);
}

/**
 * Boilerplate by class/id hints. Decided after the children are seen: a wrapper holding <main>/<article> is kept
 * even when its class says "nav-drawer" or "modal" (whole pages sit in such wrappers).
 */
function isHintedBoilerplate(el: Element, ctx: WalkContext, holdsMarkedContent: boolean, textLength: number, linkLength: number): boolean {
  if (holdsMarkedContent || el.tag === 'body' || el.tag === 'a') return false;
  // An <article>/<main> with real text is content whatever its classes say ("url-breadcrumb", "has-modal").
  if (textLength >= 200 && isMarkedContent(el)) return false;
  const hints = hintsOf(el);
  if (!hints) return false;
  // Long, link-poor text is not a menu, banner or pop-up whatever its class says ("box article modal-enabled").
  // Short date, byline and sharing lines around the article text.
  if (textLength < 200 && META_LINE.test(hints)) return true;
  if (ALWAYS_BOILERPLATE.test(hints)) return !(textLength >= 1500 && linkLength < textLength * 0.3);
  return ctx.strict && !ctx.inTable && UNLIKELY.test(hints) && !MAYBE_CONTENT.test(hints);
}

export function isMarkedContent(el: Element): boolean {
  return el.tag === 'main' || el.tag === 'article' || el.attrs['role'] === 'main';
}

export const EXCLUDED: ElementStats = {
  textLength: 0,
  linkLength: 0,
  commas: 0,
  excluded: true,
  holdsMarkedContent: false,
  score: 0,
  scored: false,
};

/** A run of text that scores its container: a paragraph element, or the loose text of a wrapper (scored from itself). */
export interface ScoredText {
  /** The first element that receives the score. */
  scores: Element;
  textLength: number;
  commas: number;
}

/** Post-order pass: text and link lengths per element, boilerplate subtrees marked excluded. */
export function computeStats(el: Element, ctx: WalkContext, scoredParagraphs: ScoredText[]): ElementStats {
  if (isStructuralBoilerplate(el, ctx)) {
    el.stats = EXCLUDED;
    return EXCLUDED;
  }
  const paragraphsBefore = scoredParagraphs.length;
  const childCtx: WalkContext =
    el.tag === 'article' || el.tag === 'main' || el.tag === 'table'
      ? { strict: ctx.strict, inArticle: ctx.inArticle || el.tag !== 'table', inTable: ctx.inTable || el.tag === 'table' }
      : ctx;
  let textLength = 0;
  let linkLength = 0;
  let commas = 0;
  let hasBlockChild = false;
  let holdsMarkedContent = false;
  // Text directly in this element or in its inline children: a paragraph without a <p> when blocks sit beside it.
  let looseText = 0;
  let looseLinks = 0;
  let looseCommas = 0;
  for (const child of el.children) {
    if (typeof child === 'string') {
      const length = visibleLength(child);
      const childCommas = countCommas(child);
      textLength += length;
      commas += childCommas;
      looseText += length;
      looseCommas += childCommas;
      continue;
    }
    const stats = computeStats(child, childCtx, scoredParagraphs);
    const childLinks = child.tag === 'a' ? stats.textLength : stats.linkLength;
    textLength += stats.textLength;
    linkLength += childLinks;
    commas += stats.commas;
    if (stats.holdsMarkedContent || (!stats.excluded && isMarkedContent(child))) holdsMarkedContent = true;
    if (INLINE_TAGS.has(child.tag)) {
      looseText += stats.textLength;
      looseLinks += childLinks;
      looseCommas += stats.commas;
    } else {
      hasBlockChild = true;
    }
  }
  if (isHintedBoilerplate(el, ctx, holdsMarkedContent, textLength, linkLength)) {
    scoredParagraphs.length = paragraphsBefore;
    el.stats = EXCLUDED;
    return EXCLUDED;
  }
  const stats: ElementStats = { textLength, linkLength, commas, excluded: false, holdsMarkedContent, score: 0, scored: false };
  el.stats = stats;
  if (textLength >= 25 && el.parent && (SCORED_TAGS.has(el.tag) || (!hasBlockChild && WRAPPER_TAGS.has(el.tag)))) {
    scoredParagraphs.push({ scores: el.parent, textLength, commas });
  } else if (hasBlockChild && looseText >= 100 && looseLinks < looseText * 0.5 && WRAPPER_TAGS.has(el.tag)) {
    scoredParagraphs.push({ scores: el, textLength: looseText, commas: looseCommas });
  }
  return stats;
}

