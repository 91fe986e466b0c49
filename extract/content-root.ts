import { computeStats, isMarkedContent, type ScoredText, type WalkContext } from './element-stats.js';
import { WRAPPER_TAGS, contains, hintsOf, linkDensity, textOf } from './element-text.js';
import { COMMENT_HINT, hasAdHint, hasHidingClass } from './hints.js';
import type { Element } from './html-tree.js';
import { SENTENCE_END } from './words.js';

const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|sect/i;
const NEGATIVE =
  /banner|combx|com-|contact|foot|footer|footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget/i;

function classWeight(el: Element, ctx: WalkContext): number {
  const hints = hintsOf(el);
  if (!hints) return 0;
  let weight = 0;
  if (NEGATIVE.test(hints) || hasAdHint(el) || hasHidingClass(el) || (!ctx.commentsAreContent && COMMENT_HINT.test(hints))) weight -= 25;
  if (POSITIVE.test(hints)) weight += 25;
  return weight;
}

function baseScore(el: Element, ctx: WalkContext): number {
  let score = classWeight(el, ctx);
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

export interface ContentRoots {
  /** The element, or the sibling group, that holds the main content. */
  roots: Element[];
  /** Lists of teasers for other articles found on the page (pruned when they sit inside the roots). */
  teaserLists: ReadonlySet<Element>;
}

/** Readability-style choice of the element (or the sibling group) that holds the main content. */
export function chooseContentRoots(body: Element, ctx: WalkContext): ContentRoots {
  const paragraphs: ScoredText[] = [];
  const bodyStats = computeStats(body, ctx, paragraphs);
  return pickRoots(body, bodyStats.textLength, paragraphs, ctx);
}

function pickRoots(body: Element, bodyText: number, paragraphs: readonly ScoredText[], ctx: WalkContext): ContentRoots {
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
  const listing = listingOfPosts(teaserLists, articles, bodyText);
  if (listing) return { roots: [listing], teaserLists };
  let marked: Element | null = null;
  for (const candidate of markedElements) {
    if (teaserLists.has(candidate)) continue;
    if (!marked || (candidate.stats?.textLength ?? 0) > (marked.stats?.textLength ?? 0)) marked = candidate;
  }
  const markedElement = marked as Element | null;
  const markedCandidate =
    markedElement && (markedElement.stats?.textLength ?? 0) >= Math.max(100, bodyText * 0.25) ? markedElement : null;
  const scored = scoreContentRoots(body, paragraphs, teaserLists, ctx);
  const result = (roots: Element[]): ContentRoots => ({ roots, teaserLists });
  if (!markedCandidate || !scored) return result(scored ? widenToDocument(scored.roots, body, articles) : markedCandidate ? [markedCandidate] : [body]);
  // The marked element wins when the best-scoring content lies inside it, or when it holds most of that content.
  const top = scored.top;
  if (contains(markedCandidate, top)) return result([markedCandidate]);
  if (contains(top, markedCandidate) && (markedCandidate.stats?.textLength ?? 0) >= (top.stats?.textLength ?? 0) * 0.5) {
    return result([markedCandidate]);
  }
  return result(widenToDocument(scored.roots, body, articles));
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


/** Text outside its nested <article>s that makes an element an article holding teasers rather than a teaser list. */
const OWN_PROSE_CHARS = 400;

/**
 * Elements whose text lies mostly in two or more nested <article>s, none of them dominant: lists of teasers ("you
 * may also like"), not one article. An <article> counts for the ancestors up to and including the nearest
 * enclosing <article>. An element with prose of its own beside them (an article with a "more from this campaign"
 * list inside it) is not a list.
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
    const own = total - length;
    if (count >= 2 && length >= total * 0.5 && largest < total * 0.5 && !(own >= OWN_PROSE_CHARS && own >= largest * 2)) lists.add(node);
  }
  return lists;
}

/** Average text of the <article>s of a list that makes them posts (a blog's front page) rather than teasers. */
const POST_CHARS = 300;

/**
 * A listing page whose content is its posts (a blog's front page, a category page): a list of <article>s that holds
 * most of the page's text, long enough on average to be posts rather than teasers, and alike: all open with a link
 * to their own page, or none does (an article followed by teasers of other posts opens differently from them).
 */
function listingOfPosts(teaserLists: ReadonlySet<Element>, articles: readonly Element[], bodyText: number): Element | null {
  let best: Element | null = null;
  for (const list of teaserLists) {
    const length = list.stats?.textLength ?? 0;
    if (length < bodyText * 0.5 || (best && length <= (best.stats?.textLength ?? 0))) continue;
    const posts = articles.filter((a) => contains(list, a) && !articles.some((b) => b !== a && contains(list, b) && contains(b, a)));
    if (posts.length < 2 || posts.some((p) => opensWithOwnTitle(p) !== opensWithOwnTitle(posts[0] as Element))) continue;
    let total = 0;
    for (const post of posts) total += post.stats?.textLength ?? 0;
    if (total / posts.length >= POST_CHARS) best = list;
  }
  return best;
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
  ctx: WalkContext,
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
        aStats.score = baseScore(ancestor, ctx);
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
      if ((len > 80 && density < 0.25) || (len > 0 && len <= 80 && density === 0 && SENTENCE_END.test(textOf(sibling)))) {
        roots.push(sibling);
      }
    } else if (WRAPPER_TAGS.has(sibling.tag) && classWeight(sibling, ctx) >= 0) {
      // A block of prose beside the top candidate that scored low because its text is split into many small
      // pieces (an accordion's panels, a list of questions and answers).
      const len = sibling.stats?.textLength ?? 0;
      if (len >= Math.max(200, (top.stats?.textLength ?? 0) * 0.5) && linkDensity(sibling) < 0.25) roots.push(sibling);
    }
  }
  return { top, roots };
}

