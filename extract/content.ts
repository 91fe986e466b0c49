import type { Element, ElementStats, Node } from './html-tree.js';
import { normaliseSpace } from './metadata.js';
import type { BlockLink, ContentBlock, TextBlock } from './types.js';

/** Elements that flow inside a line of text; everything else breaks the line. */
const INLINE_TAGS = new Set([
  'a', 'abbr', 'acronym', 'b', 'bdi', 'bdo', 'big', 'br', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i',
  'img', 'input', 'ins', 'kbd', 'label', 'mark', 'q', 'rp', 'rt', 'ruby', 's', 'samp', 'small', 'span', 'strike',
  'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr', 'picture', 'source', 'output', 'meter', 'progress',
]);
const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
const PARAGRAPH_TAGS = new Set(['p', 'address', 'figcaption', 'summary', 'dt', 'caption', 'legend']);
/** Elements whose own text counts as a paragraph when scoring containers. */
const SCORED_TAGS = new Set(['p', 'pre', 'td', 'blockquote', 'dd', 'li']);
/** Containers dropped inside the main content when they are mostly links (tables of contents, tag clouds). */
const LINK_CHECKED_TAGS = new Set(['ul', 'ol', 'dl', 'table', 'div', 'section', 'nav', 'menu', 'form', 'p']);

const WRAPPER_TAGS = new Set(['div', 'section', 'form']);

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
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|sect/i;
const NEGATIVE =
  /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|foot|footer|footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget/i;
const ADMONITION = /(?:^|\s)(?:note|tip|warning|caution|important|admonition|callout|hint)(?:$|\s)/i;
const HAS_LETTER = /\p{L}/u;
/** Marks a <br>; two in a row split a paragraph. */
const BREAK = '\u2029';

function hintsOf(el: Element): string {
  const cls = el.attrs['class'];
  const id = el.attrs['id'];
  return cls && id ? `${cls} ${id}` : (cls ?? id ?? '');
}

function isHidden(el: Element): boolean {
  const attrs = el.attrs;
  if ('hidden' in attrs || attrs['aria-hidden'] === 'true') return true;
  const style = attrs['style'];
  return style !== undefined && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style);
}

interface WalkContext {
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

function isMarkedContent(el: Element): boolean {
  return el.tag === 'main' || el.tag === 'article' || el.attrs['role'] === 'main';
}

const EXCLUDED: ElementStats = {
  textLength: 0,
  linkLength: 0,
  commas: 0,
  excluded: true,
  holdsMarkedContent: false,
  score: 0,
  scored: false,
};

/** A run of text that scores its container: a paragraph element, or the loose text of a wrapper (scored from itself). */
interface ScoredText {
  /** The first element that receives the score. */
  scores: Element;
  textLength: number;
  commas: number;
}

/** Post-order pass: text and link lengths per element, boilerplate subtrees marked excluded. */
function computeStats(el: Element, ctx: WalkContext, scoredParagraphs: ScoredText[]): ElementStats {
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

function visibleLength(text: string): number {
  let n = 0;
  let inSpace = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160) {
      if (!inSpace) n++;
      inSpace = true;
    } else {
      n++;
      inSpace = false;
    }
  }
  return n;
}

function countCommas(text: string): number {
  let n = 0;
  for (let i = text.indexOf(','); i !== -1; i = text.indexOf(',', i + 1)) n++;
  return n;
}

function linkDensity(el: Element): number {
  const s = el.stats;
  return s && s.textLength > 0 ? s.linkLength / s.textLength : 0;
}

function classWeight(el: Element): number {
  const hints = hintsOf(el);
  if (!hints) return 0;
  let weight = 0;
  if (NEGATIVE.test(hints)) weight -= 25;
  if (POSITIVE.test(hints)) weight += 25;
  return weight;
}

function baseScore(el: Element): number {
  let score = classWeight(el);
  switch (el.tag) {
    case 'article':
    case 'main':
      score += 10;
      break;
    case 'div':
    case 'section':
      score += 5;
      break;
    case 'pre':
    case 'td':
    case 'blockquote':
      score += 3;
      break;
    case 'address':
    case 'ol':
    case 'ul':
    case 'dl':
    case 'dd':
    case 'dt':
    case 'li':
    case 'form':
      score -= 3;
      break;
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
    case 'th':
      score -= 5;
      break;
  }
  return score;
}

/** Readability-style choice of the element (or the sibling group) that holds the main content. */
function chooseContentRoots(body: Element, strict: boolean): Element[] {
  const paragraphs: ScoredText[] = [];
  const bodyStats = computeStats(body, { strict, inArticle: false, inTable: false }, paragraphs);

  // An explicit <main>/<article>/role=main holding a fair share of the text wins outright, unless it is a teaser list.
  const markedElements: Element[] = [];
  const articles: Element[] = [];
  const findMarked = (el: Element): void => {
    for (const child of el.children) {
      if (typeof child === 'string' || child.stats?.excluded) continue;
      if (child.tag === 'article') articles.push(child);
      if (isMarkedContent(child)) markedElements.push(child);
      findMarked(child);
    }
  };
  findMarked(body);
  const teaserLists = teaserListsAmong(articles, body);
  let marked: Element | null = null;
  for (const candidate of markedElements) {
    if (teaserLists.has(candidate)) continue;
    if (!marked || (candidate.stats?.textLength ?? 0) > (marked.stats?.textLength ?? 0)) marked = candidate;
  }
  const markedElement = marked as Element | null;
  const markedCandidate =
    markedElement && (markedElement.stats?.textLength ?? 0) >= Math.max(100, bodyStats.textLength * 0.25) ? markedElement : null;
  const scored = scoreContentRoots(body, paragraphs, teaserLists);
  if (!markedCandidate || !scored) return scored ? widenToDocument(scored.roots, body, articles) : markedCandidate ? [markedCandidate] : [body];
  // The marked element wins when the best-scoring content lies inside it, or when it holds most of that content.
  const top = scored.top;
  if (contains(markedCandidate, top)) return [markedCandidate];
  if (contains(top, markedCandidate) && (markedCandidate.stats?.textLength ?? 0) >= (top.stats?.textLength ?? 0) * 0.5) {
    return [markedCandidate];
  }
  return widenToDocument(scored.roots, body, articles);
}

/** Link density above which the text an ancestor adds beside the content is navigation or related links. */
const WIDEN_MAX_LINK_DENSITY = 0.3;
/** Share of the added text that must lie in sections like the one holding the content. */
const WIDEN_MIN_SECTION_SHARE = 0.5;

/** The innermost element holding the first visible text below `el`, in document order. */
function firstTextHolder(el: Element): Element | null {
  for (const child of el.children) {
    if (typeof child === 'string') {
      if (child.trim()) return el;
      continue;
    }
    if (child.stats?.excluded || (child.stats?.textLength ?? 0) === 0) continue;
    return firstTextHolder(child) ?? child;
  }
  return null;
}

function insideLink(el: Element, stop: Element): boolean {
  for (let node: Element | null = el; node && node !== stop; node = node.parent) if (node.tag === 'a' && node.attrs['href']) return true;
  return false;
}

/**
 * A section of a document opens with a title of its own (a heading, a table's caption); a teaser for another page
 * opens with a link to it.
 */
function opensWithOwnTitle(el: Element): boolean {
  const holder = firstTextHolder(el);
  return !!holder && !insideLink(holder, el);
}

/**
 * A reference page (a manual's chapter, a configuration or function reference) is a run of sibling sections, each
 * scored on its own: the best one wins and the others are lost, although they are as much the page's content. Widen
 * to the outermost ancestor where the text beside the chosen content lies mostly in sections like the one holding
 * it (same element and class, each opening with a title that is not a link). Climbing stops at the first ancestor
 * that adds link-heavy text (navigation, "related" lists) or holds an <article> of its own beside the content
 * (another post, a teaser); boilerplate already excluded (footers, comments, hidden parts) is not counted.
 */
function widenToDocument(roots: Element[], body: Element, articles: readonly Element[]): Element[] {
  const first = roots[0];
  if (!first) return roots;
  const otherArticles = articles.filter((a) => !roots.some((root) => contains(root, a) || contains(a, root)));
  let chosen = roots;
  let text = 0;
  let links = 0;
  for (const root of roots) {
    text += root.stats?.textLength ?? 0;
    links += root.stats?.linkLength ?? 0;
  }
  let onPath: Element = first;
  for (let ancestor = first.parent; ancestor && ancestor !== body; onPath = ancestor, ancestor = ancestor.parent) {
    const stats = ancestor.stats;
    if (!stats || stats.excluded) break;
    if (otherArticles.some((a) => contains(ancestor as Element, a))) break;
    const extra = stats.textLength - text;
    if (extra <= 0) continue;
    if ((stats.linkLength - links) / extra > WIDEN_MAX_LINK_DENSITY) break;
    if (!opensWithOwnTitle(onPath)) continue;
    const sectionClass = onPath.attrs['class'] ?? '';
    let inSections = 0;
    for (const sibling of ancestor.children) {
      if (typeof sibling === 'string' || sibling === onPath || sibling.stats?.excluded) continue;
      if (sibling.tag === onPath.tag && (sibling.attrs['class'] ?? '') === sectionClass && opensWithOwnTitle(sibling)) {
        inSections += sibling.stats?.textLength ?? 0;
      }
    }
    if (inSections > 0 && inSections >= extra * WIDEN_MIN_SECTION_SHARE) {
      chosen = [ancestor];
      text = stats.textLength;
      links = stats.linkLength;
    }
  }
  return chosen;
}

/**
 * Elements whose text lies mostly in two or more nested <article>s, none of them dominant: lists of teasers ("you
 * may also like"), not one article. An <article> counts for the ancestors up to and including the nearest
 * enclosing <article>.
 */
function teaserListsAmong(articles: readonly Element[], body: Element): Set<Element> {
  const lists = new Set<Element>();
  if (articles.length < 2) return lists;
  const nested = new Map<Element, { count: number; length: number; largest: number }>();
  for (const article of articles) {
    const length = article.stats?.textLength ?? 0;
    for (let node = article.parent; node && node !== body; node = node.parent) {
      let entry = nested.get(node);
      if (!entry) {
        entry = { count: 0, length: 0, largest: 0 };
        nested.set(node, entry);
      }
      entry.count++;
      entry.length += length;
      if (length > entry.largest) entry.largest = length;
      if (node.tag === 'article') break;
    }
  }
  for (const [node, { count, length, largest }] of nested) {
    const total = node.stats?.textLength ?? 0;
    if (count >= 2 && length >= total * 0.5 && largest < total * 0.5) lists.add(node);
  }
  return lists;
}

function hasAncestorIn(el: Element, set: ReadonlySet<Element>): boolean {
  for (let node = el.parent; node; node = node.parent) if (set.has(node)) return true;
  return false;
}

/** Readability-style scoring: the top candidate and the sibling group around it; null without candidates. */
function scoreContentRoots(
  body: Element,
  paragraphs: readonly ScoredText[],
  teaserLists: ReadonlySet<Element>,
): { top: Element; roots: Element[] } | null {
  const candidates: Element[] = [];
  for (const p of paragraphs) {
    // Teasers for other articles say nothing about where this one is.
    if (teaserLists.size > 0 && (teaserLists.has(p.scores) || hasAncestorIn(p.scores, teaserLists))) continue;
    const contentScore = 1 + p.commas + Math.min(Math.floor(p.textLength / 100), 3);
    let ancestor: Element | null = p.scores;
    for (let level = 0; ancestor && level < 5; level++, ancestor = ancestor.parent) {
      const aStats = ancestor.stats;
      if (!aStats || aStats.excluded) break;
      if (!aStats.scored) {
        aStats.scored = true;
        aStats.score = baseScore(ancestor);
        candidates.push(ancestor);
      }
      aStats.score += level === 0 ? contentScore : level === 1 ? contentScore / 2 : contentScore / (level * 3);
    }
  }
  if (candidates.length === 0) return null;
  let top: Element | null = null;
  let topScore = -Infinity;
  const finalScore = new Map<Element, number>();
  for (const c of candidates) {
    const score = (c.stats?.score ?? 0) * (1 - linkDensity(c));
    finalScore.set(c, score);
    if (score > topScore) {
      topScore = score;
      top = c;
    }
  }
  if (!top) return null;

  // Several near-equal candidates: their common ancestor is the article (readability's alternative candidates).
  const alternatives = candidates.filter((c) => c !== top && (finalScore.get(c) ?? 0) >= topScore * 0.75);
  if (alternatives.length >= 3) {
    let ancestor = top.parent;
    while (ancestor && ancestor !== body) {
      const holds = alternatives.filter((a) => contains(ancestor as Element, a)).length;
      if (holds >= 3) {
        top = ancestor;
        break;
      }
      ancestor = ancestor.parent;
    }
  }
  // Readability's climb: a parent scoring higher than the top candidate holds more of the article.
  {
    let lastScore = topScore;
    const floor = topScore / 3;
    for (let ancestor = top.parent; ancestor && ancestor !== body; ancestor = ancestor.parent) {
      const score = finalScore.get(ancestor);
      if (score === undefined) continue;
      if (score < floor) break;
      if (score > lastScore) {
        top = ancestor;
        break;
      }
      lastScore = score;
    }
  }
  // A lone child carries no extra structure; its parent may hold the heading or intro beside it.
  while (top.parent && top.parent !== body && top.parent.children.filter((c) => typeof c !== 'string').length === 1) {
    top = top.parent;
  }

  const parent = top.parent;
  if (!parent) return { top, roots: [top] };
  const threshold = Math.max(10, topScore * 0.2);
  const topHints = top.attrs['class'];
  const roots: Element[] = [];
  for (const sibling of parent.children) {
    if (typeof sibling === 'string' || sibling.stats?.excluded) continue;
    if (sibling === top) {
      roots.push(sibling);
      continue;
    }
    if (teaserLists.has(sibling)) continue;
    let bonus = 0;
    if (topHints && sibling.attrs['class'] === topHints) bonus = topScore * 0.2;
    const score = finalScore.get(sibling);
    if (score !== undefined && score + bonus >= threshold) {
      roots.push(sibling);
    } else if (sibling.tag === 'p') {
      const len = sibling.stats?.textLength ?? 0;
      const density = linkDensity(sibling);
      if ((len > 80 && density < 0.25) || (len > 0 && len <= 80 && density === 0 && /\.( |$)/.test(textOf(sibling)))) {
        roots.push(sibling);
      }
    }
  }
  return { top, roots };
}

function contains(ancestor: Element, el: Element): boolean {
  for (let node: Element | null = el; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/** Visible text of an element, whitespace normalised; block children are separated by a space. */
export function textOf(el: Element): string {
  const parts: string[] = [];
  collectText(el, parts);
  return normaliseSpace(parts.join(''));
}

function collectText(el: Element, parts: string[]): void {
  for (const child of el.children) {
    if (typeof child === 'string') {
      parts.push(child);
    } else if (!child.stats?.excluded) {
      if (INLINE_TAGS.has(child.tag)) {
        if (child.tag === 'br') parts.push(' ');
        else collectText(child, parts);
      } else {
        parts.push(' ');
        collectText(child, parts);
        parts.push(' ');
      }
    }
  }
}

function rawText(el: Element, parts: string[]): void {
  for (const child of el.children) {
    if (typeof child === 'string') parts.push(child);
    else if (child.tag === 'br') parts.push('\n');
    else if (!child.stats?.excluded) rawText(child, parts);
  }
}

/** Links with an href below an element (not inside excluded subtrees), in document order. */
function linksBelow(el: Element, out: BlockLink[]): BlockLink[] {
  for (const child of el.children) {
    if (typeof child === 'string' || child.stats?.excluded) continue;
    if (child.tag === 'a') {
      const link = linkOf(child);
      if (link) out.push(link);
    } else {
      linksBelow(child, out);
    }
  }
  return out;
}

function linkOf(a: Element): BlockLink | null {
  const href = a.attrs['href']?.trim();
  if (!href || href.startsWith('#') || /^(?:javascript|data|vbscript):/i.test(href)) return null;
  const text = textOf(a);
  return text ? { text, href } : null;
}

function withLinks(block: TextBlock, links: readonly BlockLink[]): TextBlock {
  const inBlock = links.filter((l) => block.text.includes(l.text));
  if (inBlock.length > 0) block.links = inBlock;
  return block;
}

class BlockWriter {
  readonly blocks: ContentBlock[] = [];
  private inline: string[] = [];
  private inlineLinks: BlockLink[] = [];
  private prefix = '';

  /** Inside a mostly-links wrapper kept for its prose, where the page's own table of contents is kept too. */
  private inLinkDenseWrapper = false;
  private inTableOfContents = false;

  constructor(private readonly dropLinkLists: boolean) {}

  flush(): void {
    if (this.inline.length === 0) return;
    const raw = this.inline.join('');
    const links = this.inlineLinks;
    this.inline = [];
    this.inlineLinks = [];
    const pieces = raw.includes(BREAK) ? raw.split(/\u2029\s*\u2029/) : [raw];
    for (const piece of pieces) {
      const text = normaliseSpace(piece);
      // A paragraph without a letter is a share count, a page number or a bullet.
      if (text && HAS_LETTER.test(text)) this.push(links.length > 0 ? withLinks({ type: 'paragraph', text }, links) : { type: 'paragraph', text });
    }
  }

  private push(block: ContentBlock): void {
    if (this.prefix && block.type !== 'heading') {
      block.text = `${this.prefix} ${block.text}`;
      this.prefix = '';
    }
    this.blocks.push(block);
  }

  children(nodes: readonly Node[]): void {
    for (const node of nodes) {
      if (typeof node === 'string') this.inline.push(node);
      else this.element(node);
    }
  }

  element(el: Element): void {
    if (el.stats?.excluded) return;
    const tag = el.tag;
    if (INLINE_TAGS.has(tag)) {
      if (tag === 'br') this.inline.push(BREAK);
      else if (tag !== 'img' && tag !== 'input') {
        if (tag === 'a') {
          const link = linkOf(el);
          if (link) this.inlineLinks.push(link);
        }
        this.children(el.children);
      }
      return;
    }
    this.flush();
    const level = HEADING_LEVEL[tag];
    if (level !== undefined) {
      const text = textOf(el);
      if (!text) return;
      if (isAdmonitionLabel(el, text)) this.prefix = `${text}:`;
      else this.blocks.push({ type: 'heading', level, text });
      return;
    }
    if (this.dropLinkLists && !this.inTableOfContents && LINK_CHECKED_TAGS.has(tag) && linkDensity(el) > 0.5) {
      if (this.inLinkDenseWrapper && isTableOfContents(el)) {
        this.inTableOfContents = true;
        this.element(el);
        this.inTableOfContents = false;
        return;
      }
      if (!holdsProse(el)) return;
      if (!this.inLinkDenseWrapper) {
        // An intro beside a table of contents (a documentation chapter page): both are the page's content.
        this.inLinkDenseWrapper = true;
        this.children(el.children);
        this.flush();
        this.inLinkDenseWrapper = false;
        return;
      }
    }
    if (PARAGRAPH_TAGS.has(tag)) {
      this.children(el.children);
      this.flush();
      return;
    }
    switch (tag) {
      case 'pre': {
        const parts: string[] = [];
        rawText(el, parts);
        const text = parts
          .join('')
          .replace(/[ \t]+$/gm, '')
          .replace(/^\n+|\s+$/g, '');
        if (text) this.push({ type: 'code', text });
        return;
      }
      case 'ul':
      case 'ol': {
        const items: string[] = [];
        for (const child of el.children) {
          const text = typeof child === 'string' ? normaliseSpace(child) : child.stats?.excluded ? '' : textOf(child);
          if (text) items.push(text);
        }
        if (items.length > 0) {
          const block = withLinks({ type: 'list', text: items.join('\n'), items, ordered: tag === 'ol' }, linksBelow(el, []));
          this.push(block);
        }
        return;
      }
      case 'table': {
        if (isLayoutTable(el)) {
          this.children(el.children);
          this.flush();
          return;
        }
        const table = tableRows(el);
        if (table.lines.length > 0) {
          const block: TextBlock = { type: 'table', text: table.lines.join('\n'), rows: table.rows, headerRow: table.headerRow };
          this.push(withLinks(block, linksBelow(el, [])));
        }
        return;
      }
      case 'blockquote': {
        const text = textOf(el);
        if (text) this.push(withLinks({ type: 'quote', text }, linksBelow(el, [])));
        return;
      }
      case 'hr':
        return;
      default:
        this.children(el.children);
        this.flush();
    }
  }
}

const TABLE_OF_CONTENTS = /(?:^|[\s_-])toc(?:$|[\s_-])|table-?of-?contents/i;

function isTableOfContents(el: Element): boolean {
  const hints = hintsOf(el);
  return hints !== '' && TABLE_OF_CONTENTS.test(hints);
}

/** A wrapper whose link-free text is long holds paragraphs beside its link lists: look inside rather than drop it. */
function holdsProse(el: Element): boolean {
  const stats = el.stats;
  return stats !== undefined && WRAPPER_TAGS.has(el.tag) && stats.textLength - stats.linkLength >= 200;
}

function isAdmonitionLabel(heading: Element, text: string): boolean {
  if (text.split(' ').length > 2) return false;
  for (let node = heading.parent, i = 0; node && i < 4; node = node.parent, i++) {
    const cls = node.attrs['class'];
    if (cls && ADMONITION.test(cls)) return true;
  }
  return false;
}

function isLayoutTable(table: Element): boolean {
  if (table.attrs['role'] === 'presentation') return true;
  let hasHeaderCell = 'summary' in table.attrs;
  let maxCells = 0;
  let layout = false;
  const visit = (el: Element, depth: number): void => {
    for (const child of el.children) {
      if (typeof child === 'string' || layout) continue;
      const tag = child.tag;
      if (tag === 'table' || HEADING_LEVEL[tag] !== undefined) {
        layout = true;
        return;
      }
      if (tag === 'th' || tag === 'thead' || tag === 'caption') hasHeaderCell = true;
      if (tag === 'tr') {
        const cells = child.children.filter((c) => typeof c !== 'string' && (c.tag === 'td' || c.tag === 'th')).length;
        if (cells > maxCells) maxCells = cells;
      }
      if (depth < 50) visit(child, depth + 1);
    }
  };
  visit(table, 0);
  return layout || (!hasHeaderCell && maxCells <= 1);
}

function tableRows(table: Element): { lines: string[]; rows: string[][]; headerRow: boolean } {
  const lines: string[] = [];
  const rows: string[][] = [];
  let headerRow = false;
  const visit = (el: Element): void => {
    for (const child of el.children) {
      if (typeof child === 'string' || child.stats?.excluded) continue;
      if (child.tag === 'caption') {
        const text = textOf(child);
        if (text) lines.push(text);
      } else if (child.tag === 'tr') {
        const cells: string[] = [];
        let allHeaders = true;
        for (const cell of child.children) {
          if (typeof cell !== 'string' && (cell.tag === 'td' || cell.tag === 'th')) {
            cells.push(textOf(cell));
            if (cell.tag === 'td') allHeaders = false;
          }
        }
        if (cells.some((c) => c.length > 0)) {
          if (rows.length === 0) headerRow = allHeaders;
          lines.push(cells.join(' | '));
          rows.push(cells);
        }
      } else if (child.tag !== 'table') {
        visit(child);
      }
    }
  };
  visit(table);
  return { lines, rows, headerRow };
}

function wordsOf(blocks: readonly ContentBlock[]): number {
  let n = 0;
  for (const b of blocks) n += countWords(b.text);
  return n;
}

export function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/**
 * class/id hints of page furniture that sits inside an article container: sharing bars, related-story and
 * "most popular" lists, newsletter sign-ups, tag lists, author boxes, galleries (trafilatura's discard list).
 */
const IN_CONTENT_BOILERPLATE =
  /related|most-?popular|popular-|recommend|newsletter|subscribe|signup|sign-up|(?:^|[\s_-])shar(?:e|ing)|social|sociable|syndication|promo|advert|(?:^|[\s_-])ads?(?:$|[\s_-])|sponsor|outbrain|taboola|comment|breadcrumb|(?:^|[\s_-])tags?(?:$|[\s_-])|tag-?list|author|about-?the-?author|gallery|slideshow|read-?more|more-?stories|next-?post|paywall|donate|caption|credit|timestamp|byline|dateline|(?:^|[\s_-])meta(?:$|[\s_-])|hidden|hide|footer|widget/i;

/** Drops hinted furniture inside the chosen containers while it holds a small share of their text. */
function pruneInside(roots: readonly Element[]): void {
  let total = 0;
  for (const root of roots) total += root.stats?.textLength ?? 0;
  const limit = total * 0.3;
  const visit = (el: Element): void => {
    for (const child of el.children) {
      if (typeof child === 'string' || child.stats?.excluded || INLINE_TAGS.has(child.tag)) continue;
      const hints = furnitureHintsOf(child);
      if (
        hints &&
        ((child.stats?.textLength ?? 0) <= limit || linkDensity(child) > 0.5) &&
        IN_CONTENT_BOILERPLATE.test(hints) &&
        !holdsQuote(child)
      ) {
        discount(child);
        child.stats = EXCLUDED;
        continue;
      }
      visit(child);
    }
  };
  for (const root of roots) visit(root);
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

function emit(roots: readonly Element[], dropLinkLists: boolean): ContentBlock[] {
  const writer = new BlockWriter(dropLinkLists);
  for (const root of roots) {
    writer.children(root.children);
    writer.flush();
  }
  return writer.blocks;
}

/** Text shorter than this on the strict pass triggers a second, more lenient pass (readability uses 500 too). */
const MIN_CONTENT_CHARS = 500;

/** Main-content blocks of a parsed body. */
export function extractBlocks(body: Element): ContentBlock[] {
  let roots = chooseContentRoots(body, true);
  pruneInside(roots);
  let blocks = emitWithFallback(roots);
  if (charsOf(blocks) < MIN_CONTENT_CHARS) {
    roots = chooseContentRoots(body, false);
    pruneInside(roots);
    const lenient = emitWithFallback(roots);
    if (charsOf(lenient) > charsOf(blocks)) blocks = lenient;
  }
  return cutTrailingSections(blocks);
}

/** Labels that open a "more stories" or sign-up section after an article. */
const TRAILER_LABEL =
  /^(?:most (?:popular|read|viewed|shared)|related(?: (?:articles?|stories|posts|content|coverage|news|reading|links))?|you (?:may|might) (?:also )?(?:like|enjoy)|recommended(?: (?:for you|stories|articles|reading))?|more (?:from|stories|news|on|in|like this)\b.*|(?:our )?latest (?:stories|news|articles|posts)|trending(?: now| stories)?|read (?:more|next|this next)|popular (?:posts|stories|articles)|top stories|editor'?s picks|what to read next|sponsored(?: content| stories)?|関連記事|おすすめ記事|você pode gostar\.*|leia também|veja também|lesen sie auch|mehr zum thema|à lire aussi|lire aussi|te puede interesar|también te puede interesar|noticias relacionadas|artículos relacionados|potrebbe interessarti anche)\s*:?$/i;

/** Drops a trailing "related stories" section: its label and everything after, once most of the text is behind. */
function cutTrailingSections(blocks: ContentBlock[]): ContentBlock[] {
  const total = charsOf(blocks);
  let seen = 0;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (!block) continue;
    if (seen >= total * 0.4 && block.text.length <= 60 && TRAILER_LABEL.test(block.text.trim())) return blocks.slice(0, i);
    seen += block.text.length;
  }
  return blocks;
}

function emitWithFallback(roots: readonly Element[]): ContentBlock[] {
  const blocks = emit(roots, true);
  // A page that is mostly a link list (a table of contents) keeps its links rather than coming out empty.
  return wordsOf(blocks) < 50 ? emit(roots, false) : blocks;
}

function charsOf(blocks: readonly ContentBlock[]): number {
  let n = 0;
  for (const b of blocks) n += b.text.length;
  return n;
}
