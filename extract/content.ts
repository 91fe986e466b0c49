import { charsOf, emit, wordsOf } from './blocks.js';
import { chooseContentRoots } from './content-root.js';
import { walkContext, type WalkContext } from './element-stats.js';
import type { Element } from './html-tree.js';
import { cutTrailingSections, pruneInside } from './prune.js';
import type { ContentBlock } from './types.js';

export { countWords, textOf } from './element-text.js';

/**
 * Main-content extraction, in three jobs: choosing the content root (content-root.ts, over the statistics and
 * boilerplate marks of element-stats.ts), pruning furniture inside it (prune.ts), writing blocks (blocks.ts).
 */

/** Text shorter than this on the strict pass triggers the more lenient passes (readability uses 500 too). */
const MIN_CONTENT_CHARS = 500;
/** A <noscript> copy of the page is used only when it adds at least this much text (not a "please enable JavaScript"). */
const NOSCRIPT_GAIN_CHARS = 200;

export interface PageParts {
  body: Element;
  /** <noscript> elements of the page. */
  noscripts: readonly Element[];
  /** ids named by aria-controls. */
  controlledIds: ReadonlySet<string>;
  /** Keep reader comments (`include_comments`): comment-hinted parts and the thread after the article are content. */
  includeComments?: boolean;
}

/**
 * Main-content blocks of a parsed page. The strict pass is the rule; when it finds little, further passes read what
 * it set aside, each kept only when it finds more: without "unlikely" hints and with comment-hinted posts as content
 * (forum threads, Q&A pages), with <aside>/<header> as containers (pages that sit inside one), and with <noscript>
 * content (pages that ship their text only there).
 */
export function extractBlocks(page: PageParts): ContentBlock[] {
  const base = walkContext({ controlledIds: page.controlledIds, commentsAreContent: page.includeComments === true });
  let blocks = runPass(page.body, base);
  if (charsOf(blocks) < MIN_CONTENT_CHARS) {
    blocks = better(blocks, runPass(page.body, { ...base, strict: false, commentsAreContent: true }));
  }
  if (charsOf(blocks) < MIN_CONTENT_CHARS && holdsLandmark(page.body)) {
    const inLandmarks = runPass(page.body, { ...base, landmarks: true });
    if (charsOf(inLandmarks) >= Math.max(MIN_CONTENT_CHARS, charsOf(blocks) * 2)) blocks = inLandmarks;
  }
  if (charsOf(blocks) < MIN_CONTENT_CHARS && page.noscripts.length > 0) {
    let withNoscript = runPass(page.body, { ...base, noscript: true });
    if (charsOf(withNoscript) < MIN_CONTENT_CHARS) withNoscript = better(withNoscript, runPass(page.body, { ...base, noscript: true, strict: false }));
    if (charsOf(withNoscript) >= charsOf(blocks) + NOSCRIPT_GAIN_CHARS) blocks = withNoscript;
  }
  return cutTrailingSections(blocks, { includeComments: page.includeComments === true });
}

function better(current: ContentBlock[], candidate: ContentBlock[]): ContentBlock[] {
  return charsOf(candidate) > charsOf(current) ? candidate : current;
}

function runPass(body: Element, ctx: WalkContext): ContentBlock[] {
  const { roots, teaserLists } = chooseContentRoots(body, ctx);
  pruneInside(roots, { teaserLists, commentsAreContent: ctx.commentsAreContent });
  return emitWithFallback(roots);
}

function emitWithFallback(roots: readonly Element[]): ContentBlock[] {
  const blocks = emit(roots, true);
  // A page that is mostly a link list (a table of contents) keeps its lists rather than coming out empty.
  return wordsOf(blocks) < 50 ? emit(roots, false) : blocks;
}

const LANDMARKS = new Set(['aside', 'header']);

function holdsLandmark(el: Element): boolean {
  for (const child of el.children) {
    if (typeof child === 'string') continue;
    const role = child.attrs['role'];
    if (LANDMARKS.has(child.tag) || role === 'banner' || role === 'complementary' || holdsLandmark(child)) return true;
  }
  return false;
}
