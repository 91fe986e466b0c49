import { charsOf, emit, wordsOf } from './blocks.js';
import { chooseContentRoots } from './content-root.js';
import type { Element } from './html-tree.js';
import { cutTrailingSections, pruneInside } from './prune.js';
import type { ContentBlock } from './types.js';

export { countWords, textOf } from './element-text.js';

/**
 * Main-content extraction, in three jobs: choosing the content root (content-root.ts, over the statistics and
 * boilerplate marks of element-stats.ts), pruning furniture inside it (prune.ts), writing blocks (blocks.ts).
 */

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

function emitWithFallback(roots: readonly Element[]): ContentBlock[] {
  const blocks = emit(roots, true);
  // A page that is mostly a link list (a table of contents) keeps its links rather than coming out empty.
  return wordsOf(blocks) < 50 ? emit(roots, false) : blocks;
}
