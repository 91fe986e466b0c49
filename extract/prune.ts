import { EXCLUDED } from './element-stats.js';
import { INLINE_TAGS, linkDensity, textOf } from './element-text.js';
import { COMMENT_HINT, hasAdHint, hasHidingClass } from './hints.js';
import type { Element } from './html-tree.js';
import { charsOf } from './blocks.js';
import type { ContentBlock } from './types.js';

/**
 * class/id hints of page furniture that sits inside an article container: sharing bars, related-story and
 * "most popular" lists, newsletter sign-ups, tag lists, author boxes, galleries (trafilatura's discard list).
 */
const IN_CONTENT_BOILERPLATE =
  /related|most-?popular|popular-|recommend|newsletter|subscribe|signup|sign-up|(?:^|[\s_-])shar(?:e|ing)|social|sociable|syndication|promo|sponsor|outbrain|taboola|breadcrumb|(?:^|[\s_-])tags?(?:$|[\s_-])|tag-?list|author|about-?the-?author|(?:^|[\s_-])bio(?:$|[\s_-])|blurb|gallery|slideshow|read-?more|more-?stories|next-?post|trending|post-?nav(?:igation)?|nav-?(?:next|prev(?:ious)?)|(?:^|\s)(?:next|prev|previous)(?:$|\s)|paywall|donate|caption|credit|timestamp|byline|dateline|(?:^|[\s_-])meta(?:$|[\s_-])|footer|widget/i;

export interface PruneOptions {
  /** Teaser lists found on the page; those inside the roots are dropped when the roots have prose of their own. */
  teaserLists: ReadonlySet<Element>;
  /** Forum and Q&A pages: comment-hinted posts are the content, not furniture. */
  commentsAreContent: boolean;
}

/** A teaser list or card row is dropped from the main content only when this much of the content lies outside it. */
const PROSE_BESIDE_TEASERS = 400;

/**
 * Drops furniture inside the chosen containers: hinted boxes while they hold a small share of the text, teaser lists
 * and card rows (links to other pages with their summaries), language switchers, and short calls to action
 * ("download this guide as a PDF", "got a tip? email us", "about the author").
 */
export function pruneInside(roots: readonly Element[], options: PruneOptions): void {
  let total = 0;
  for (const root of roots) total += root.stats?.textLength ?? 0;
  const limit = total * 0.3;
  const drop = (el: Element): void => {
    total -= el.stats?.textLength ?? 0;
    discount(el);
    el.stats = EXCLUDED;
  };
  const teasers: Element[] = [];
  const visit = (el: Element, inTeasers: boolean): void => {
    for (const child of el.children) {
      if (typeof child === 'string' || child.stats?.excluded || INLINE_TAGS.has(child.tag)) continue;
      const length = child.stats?.textLength ?? 0;
      if (isHintedFurniture(child, length, limit, options) || isLanguageSwitcher(child) || isCallToAction(child, length)) {
        drop(child);
        continue;
      }
      const teaser = !inTeasers && ((options.teaserLists.has(child) && holdsTeasersOnly(child)) || isCardRow(child));
      if (teaser) teasers.push(child);
      visit(child, inTeasers || teaser);
    }
  };
  for (const root of roots) visit(root, false);
  // Teasers are dropped only beside prose of the page's own; on a listing page they are the content.
  let teaserText = 0;
  for (const teaser of teasers) teaserText += teaser.stats?.textLength ?? 0;
  if (total - teaserText >= PROSE_BESIDE_TEASERS) for (const teaser of teasers) drop(teaser);
}

function isHintedFurniture(el: Element, length: number, limit: number, options: PruneOptions): boolean {
  if (!(length <= limit || linkDensity(el) > 0.5)) return false;
  const hints = furnitureHintsOf(el);
  const hinted =
    (hints !== '' && (IN_CONTENT_BOILERPLATE.test(hints) || (!options.commentsAreContent && COMMENT_HINT.test(hints)))) ||
    hasAdHint(el) ||
    hasHidingClass(el);
  return hinted && !holdsQuote(el);
}

/** ISO 639 codes (with an optional region) and a few ways sites spell language names in a switcher. */
const LANGUAGE_LABEL =
  /^(?:[a-z]{2,3}(?:[-_][a-z]{2,4})?|english|deutsch|español|espanol|français|francais|italiano|português|portugues|nederlands|polski|русский|日本語|中文|한국어|türkçe|svenska|dansk|norsk|suomi|čeština|magyar|română|ελληνικά|العربية|עברית|简体中文|繁體中文)$/i;

/**
 * A line or list of links to the same page in other languages ("Available Languages: de | en | fr"): most links carry
 * hreflang or a language code or name as their text, and there is little text besides.
 */
function isLanguageSwitcher(el: Element): boolean {
  const stats = el.stats;
  if (!stats || stats.linkLength === 0 || stats.textLength > 600) return false;
  const links = linksIn(el, []);
  if (links.length < 3 || stats.textLength - stats.linkLength > 60 + links.length * 3) return false;
  const languageLinks = links.filter((a) => a.attrs['hreflang'] !== undefined || LANGUAGE_LABEL.test(textOf(a).trim())).length;
  return languageLinks >= links.length * 0.6;
}

function linksIn(node: Element, links: Element[]): Element[] {
  for (const child of node.children) {
    if (typeof child === 'string') continue;
    if (child.tag === 'a') links.push(child);
    else linksIn(child, links);
  }
  return links;
}

/** Short boxes that address the reader about the site rather than the subject. */
const CALL_TO_ACTION =
  /^(?:download|print|save)\b.{0,50}\b(?:pdf|printable|print version)\b|^(?:got|have) a (?:news |story )?(?:tip|story)\b|\bsend us (?:a |your )?(?:tip|story|news)|^about the (?:author|writer|reporter|contributor)s?\b|^(?:sign up|subscribe) (?:to|for) (?:our|the) (?:free )?(?:newsletter|daily|weekly)|^follow us on\b/i;
const CALL_TO_ACTION_MAX_CHARS = 300;

/** What a call to action can start with, and a word it can hold anywhere (see CALL_TO_ACTION). */
const CALL_TO_ACTION_START = /^\s*(?:download|print|save|got|have|about|sign|subscribe|follow)/i;
const CALL_TO_ACTION_ANYWHERE = /send/i;

function isCallToAction(el: Element, length: number): boolean {
  if (length === 0 || length > CALL_TO_ACTION_MAX_CHARS || el.tag === 'li' || el.tag === 'td' || el.tag === 'tr') return false;
  return mayCallToAction(el) && CALL_TO_ACTION.test(textOf(el));
}

/** Cheap look at the text nodes (no string building): most elements are ruled out by their first words. */
function mayCallToAction(el: Element): boolean {
  return lookForCallToAction(el, { first: true });
}

function lookForCallToAction(node: Element, state: { first: boolean }): boolean {
  for (const child of node.children) {
    if (typeof child === 'string') {
      if (state.first && child.trim() !== '') {
        state.first = false;
        if (CALL_TO_ACTION_START.test(child)) return true;
      }
      if (CALL_TO_ACTION_ANYWHERE.test(child)) return true;
    } else if (!child.stats?.excluded && lookForCallToAction(child, state)) {
      return true;
    }
  }
  return false;
}

const CARD_HEADINGS = new Set(['h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * A row or grid of cards: three or more sibling items, each with a heading that links elsewhere and a short summary.
 * Inside an article these are teasers for other pages (the items of a documentation index have no headings).
 */
function isCardRow(el: Element): boolean {
  let items = 0;
  for (const c of el.children) if (typeof c !== 'string' && !c.stats?.excluded && !INLINE_TAGS.has(c.tag)) items++;
  if (items < 3) return false;
  // At most a quarter of the items may be something else than cards.
  const allowedMisses = items * 0.25;
  let cards = 0;
  let misses = 0;
  for (const c of el.children) {
    if (typeof c === 'string' || c.stats?.excluded || INLINE_TAGS.has(c.tag)) continue;
    if (isCard(c)) cards++;
    else if (++misses > allowedMisses) return false;
  }
  return cards >= 3;
}

/** The <article>s of a teaser list are cards (a linked heading, a short summary); comments and full articles are not. */
function holdsTeasersOnly(list: Element): boolean {
  const articles: Element[] = [];
  const collect = (el: Element): void => {
    for (const child of el.children) {
      if (typeof child === 'string' || child.stats?.excluded) continue;
      if (child.tag === 'article') articles.push(child);
      else collect(child);
    }
  };
  collect(list);
  return articles.length >= 2 && articles.filter(isCard).length >= articles.length * 0.75;
}

function isCard(item: Element): boolean {
  const length = item.stats?.textLength ?? 0;
  if (length === 0 || length > 400) return false;
  return holdsLinkedHeading(item, false);
}

function holdsLinkedHeading(node: Element, inLink: boolean): boolean {
  for (const child of node.children) {
    if (typeof child === 'string') continue;
    const linked = inLink || (child.tag === 'a' && child.attrs['href'] !== undefined);
    if (CARD_HEADINGS.has(child.tag) && (linked || child.children.some((c) => typeof c !== 'string' && c.tag === 'a'))) return true;
    if (holdsLinkedHeading(child, linked)) return true;
  }
  return false;
}

/** Takes a subtree about to be dropped out of its ancestors' text and link lengths (link-density checks use them). */
function discount(el: Element): void {
  const text = el.stats?.textLength ?? 0;
  const links = el.stats?.linkLength ?? 0;
  let inLink = false;
  for (let node = el.parent; node; node = node.parent) {
    const stats = node.stats;
    if (!stats || stats.excluded) return;
    stats.textLength -= text;
    stats.linkLength -= inLink ? text : links;
    if (node.tag === 'a') inLink = true;
  }
}

/**
 * class and id of an element for the furniture check. Ids that look like anchors derived from a heading or caption
 * (DocBook's upper-case ids, long slugs such as "runtime-config-replication-subscriber") name a section, not a widget.
 */
function furnitureHintsOf(el: Element): string {
  const cls = el.attrs['class'] ?? '';
  const id = el.attrs['id'];
  if (!id || id === id.toUpperCase() || id.split(/[-_]/).length > 3) return cls;
  return cls ? `${cls} ${id}` : id;
}

/** Quotes and embedded posts (tweets are <blockquote>s) are article content whatever their wrapper is called. */
function holdsQuote(el: Element): boolean {
  for (const child of el.children) {
    if (typeof child === 'string') continue;
    if (child.tag === 'blockquote' || holdsQuote(child)) return true;
  }
  return false;
}


/** Labels that open a "more stories" or sign-up section after an article. */
const TRAILER_LABEL =
  /^(?:most (?:popular|read|viewed|shared)|related(?: (?:articles?|stories|posts|content|coverage|news|reading|links))?|you (?:may|might) (?:also )?(?:like|enjoy)|recommended(?: (?:for you|stories|articles|reading))?|more (?:from|stories|news|on|in|like this)\b.*|(?:our )?latest (?:stories|news|articles|posts)|trending(?: now| stories)?|read (?:more|next|this next)|popular (?:posts|stories|articles)|top stories|editor'?s picks|what to read next|sponsored(?: content| stories)?|関連記事|おすすめ記事|você pode gostar\.*|leia também|veja também|lesen sie auch|mehr zum thema|à lire aussi|lire aussi|te puede interesar|también te puede interesar|noticias relacionadas|artículos relacionados|potrebbe interessarti anche|相关(?:新闻|阅读|文章|报道)|相關(?:新聞|閱讀|文章|報導)|推荐阅读|延伸阅读|猜你喜欢|関連ニュース|あわせて読みたい|관련 ?기사|많이 본 (?:뉴스|기사)|читайте также|похожие (?:новости|статьи)|другие новости|διαβάστε (?:επίσης|ακόμη)|اقرأ أيضا|اقرأ أيضًا|أخبار ذات صلة|כתבות נוספות|עוד בנושא|ये भी पढ़ें|यह भी पढ़ें|संबंधित (?:खबरें|ख़बरें|समाचार)|ข่าวที่เกี่ยวข้อง|ข่าวเกี่ยวข้อง)\s*[:：]?$/i;

/**
 * Labels that open a reader-comment thread after an article: "17 comments", "Responses (4)", "Leave a reply",
 * "12 thoughts on …", in the languages of the fixtures and a few more.
 */
const COMMENTS_LABEL = new RegExp(
  '^(?:' +
    // A count and what it counts: "17 responses", "Replies (4)", "2 comments on “This week”".
    '(?:\\d+ +)(?:comments?|responses?|repl(?:y|ies)|reactions?|thoughts?)(?: on\\b.*)?|(?:comments|responses|replies|reactions) *\\(\\d+\\)|' +
    // The thread's own heading or call: "Comments", "Reader comments", "Leave a reply", "Post your comment".
    '(?:reader )?comments|(?:leave|post|add|write) (?:a|your) (?:reply|comment|response)|join the (?:discussion|conversation)|' +
    'kommentare|commentaires|comentarios|comentários|commenti|reacties|комментарии|评论|評論|留言|コメント|댓글|تعليقات|תגובות|टिप्पणियां|टिप्पणियाँ|ความคิดเห็น|σχόλια' +
    ')\\s*[:：]?$',
  'i',
);
/** Article text that must come before a comments label for the thread to be cut (a forum post is its own thread). */
const ARTICLE_BEFORE_COMMENTS = 200;

export interface TrailerOptions {
  /** Keep a reader-comment thread after the article (`include_comments`). */
  includeComments?: boolean;
}

/**
 * Drops a trailing "related stories" section, its label and everything after, once most of the text is behind; and,
 * unless comments are asked for, a reader-comment thread after the article (from its label on), however long it is.
 */
export function cutTrailingSections(blocks: ContentBlock[], options: TrailerOptions = {}): ContentBlock[] {
  const total = charsOf(blocks);
  let seen = 0;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (!block) continue;
    const label = block.text.length <= 60 ? block.text.trim() : '';
    if (label && seen >= total * 0.4 && TRAILER_LABEL.test(label)) return blocks.slice(0, i);
    if (label && !options.includeComments && seen >= ARTICLE_BEFORE_COMMENTS && COMMENTS_LABEL.test(label)) return blocks.slice(0, i);
    seen += block.text.length;
  }
  return blocks;
}
