import type { Element, ElementStats } from './html-tree.js';
import { INLINE_TAGS, WRAPPER_TAGS, countCommas, hintsOf, visibleLength } from './element-text.js';
import { COMMENT_HINT, hasAdHint } from './hints.js';

/** Elements whose own text counts as a paragraph when scoring containers. */
const SCORED_TAGS = new Set(['p', 'pre', 'td', 'blockquote', 'dd', 'li']);

const BOILERPLATE_TAGS = new Set(['nav', 'footer', 'dialog', 'menu']);
const BOILERPLATE_ROLES = new Set(['navigation', 'contentinfo', 'search', 'dialog', 'alertdialog', 'menu', 'menubar', 'toolbar', 'tooltip']);
/** Landmarks that hold a page's header or sidebar, and (on some sites) the whole page: see WalkContext.landmarks. */
const LANDMARK_TAGS = new Set(['aside', 'header']);
const LANDMARK_ROLES = new Set(['banner', 'complementary']);
/** class/id hints that always mean boilerplate. */
const ALWAYS_BOILERPLATE =
  /(?:^|\s)nav|[-_]nav(?:$|[\s_-])|navbar|navigation|cookie|consent|gdpr|breadcrumb|skip-?(?:link|nav|to)|sr-only|visually-hidden|screen-reader-text|popup|modal|newsletter/i;
/** Readability's "unlikely candidates": dropped on the first pass unless a positive hint is also present. */
const UNLIKELY =
  /ai2html|banner|breadcrumbs|combx|community|cover-wrap|disqus|extra|footer|header|legends|menu|related|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|agegate|pagination|pager|yom-remote|share|toolbar|masthead/i;
const META_LINE =
  /byline|dateline|timestamp|(?:^|[-_\s])(?:date|time|author|authors|updated|published|credit|credits|caption)(?:$|[-_\s])|post-?meta|entry-meta|article-meta|share|social/i;
const MAYBE_CONTENT = /article|body|column|content|main|mathjax|shadow|post|entry|story/i;

/**
 * Hidden by attribute or inline style. Tab and accordion panels are hidden only until their tab is chosen: a
 * role="tabpanel", or an element whose id a control names in aria-controls, is content.
 */
function isHidden(el: Element, ctx: WalkContext): boolean {
  const attrs = el.attrs;
  const style = attrs['style'];
  const hidden = 'hidden' in attrs || attrs['aria-hidden'] === 'true' || (style !== undefined && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style));
  if (!hidden) return false;
  const id = attrs['id'];
  return !(attrs['role'] === 'tabpanel' || (id !== undefined && ctx.controlledIds.has(id)));
}

export interface WalkContext {
  strict: boolean;
  inArticle: boolean;
  inTable: boolean;
  /** Take <noscript> content as page content (for pages that ship their text only there). */
  noscript: boolean;
  /** Take <aside>/<header> (and banner/complementary roles) as ordinary containers: for pages that sit inside one. */
  landmarks: boolean;
  /** Comment-hinted elements are content: forum threads and Q&A pages, whose posts carry such classes. */
  commentsAreContent: boolean;
  /** ids named by aria-controls (tab and accordion panels). */
  controlledIds: ReadonlySet<string>;
}

export function walkContext(options: Partial<WalkContext> & { controlledIds: ReadonlySet<string> }): WalkContext {
  return { strict: true, inArticle: false, inTable: false, noscript: false, landmarks: false, commentsAreContent: false, ...options };
}

/** Boilerplate by tag, role or visibility: certain whatever the element holds. */
function isStructuralBoilerplate(el: Element, ctx: WalkContext): boolean {
  const tag = el.tag;
  if (tag === 'body' || tag === 'a') return false;
  if (BOILERPLATE_TAGS.has(tag)) return true;
  if (tag === 'noscript') return !ctx.noscript;
  if (!ctx.landmarks && LANDMARK_TAGS.has(tag) && !(tag === 'header' && ctx.inArticle)) return true;
  // Photo captions and credits are not part of an article's running text.
  if (tag === 'figcaption') return true;
  if (tag === 'input' || (tag === 'form' && /search/i.test(hintsOf(el) + (el.attrs['role'] ?? '')))) return true;
  const role = el.attrs['role'];
  if (role !== undefined && (BOILERPLATE_ROLES.has(role) || (!ctx.landmarks && LANDMARK_ROLES.has(role)))) return true;
  return isHidden(el, ctx);
}

/** A tab bar is boilerplate; an accordion marked up as one tablist, with its panels inside, is not. */
function holdsTabPanel(el: Element): boolean {
  for (const child of el.children) {
    if (typeof child === 'string') continue;
    if (child.attrs['role'] === 'tabpanel' || holdsTabPanel(child)) return true;
  }
  return false;
}

/**
 * Boilerplate by class/id hints. Decided after the children are seen: a wrapper holding <main>/<article> is kept
 * even when its class says "nav-drawer" or "modal" (whole pages sit in such wrappers).
 */
function isHintedBoilerplate(el: Element, ctx: WalkContext, holdsMarkedContent: boolean, textLength: number, linkLength: number): boolean {
  if (holdsMarkedContent || el.tag === 'body' || el.tag === 'a') return false;
  if (el.attrs['role'] === 'tablist' && !holdsTabPanel(el)) return true;
  // An <article>/<main> with real text is content whatever its classes say ("url-breadcrumb", "has-modal").
  if (textLength >= 200 && isMarkedContent(el)) return false;
  const hints = hintsOf(el);
  if (!hints) return false;
  // Long, link-poor text is not a menu, banner or pop-up whatever its class says ("box article modal-enabled").
  // Short date, byline and sharing lines around the article text.
  if (textLength < 200 && META_LINE.test(hints)) return true;
  if (ALWAYS_BOILERPLATE.test(hints)) return !(textLength >= 1500 && linkLength < textLength * 0.3);
  if (!ctx.strict || ctx.inTable || MAYBE_CONTENT.test(hints)) return false;
  return UNLIKELY.test(hints) || hasAdHint(el) || (!ctx.commentsAreContent && COMMENT_HINT.test(hints));
}

/** An <a> that opens a tab, an accordion panel or a menu is a control, not a link: its text is not link text. */
function isControl(a: Element): boolean {
  const attrs = a.attrs;
  return attrs['role'] === 'button' || attrs['role'] === 'tab' || attrs['aria-controls'] !== undefined || attrs['data-toggle'] !== undefined || attrs['data-bs-toggle'] !== undefined;
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
      ? { ...ctx, inArticle: ctx.inArticle || el.tag !== 'table', inTable: ctx.inTable || el.tag === 'table' }
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
    const childLinks = child.tag === 'a' && !isControl(child) ? stats.textLength : stats.linkLength;
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

