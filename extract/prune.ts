import { EXCLUDED } from './element-stats.js';
import { INLINE_TAGS, linkDensity } from './element-text.js';
import type { Element } from './html-tree.js';
import { charsOf } from './blocks.js';
import type { ContentBlock } from './types.js';

/**
 * class/id hints of page furniture that sits inside an article container: sharing bars, related-story and
 * "most popular" lists, newsletter sign-ups, tag lists, author boxes, galleries (trafilatura's discard list).
 */
const IN_CONTENT_BOILERPLATE =
  /related|most-?popular|popular-|recommend|newsletter|subscribe|signup|sign-up|(?:^|[\s_-])shar(?:e|ing)|social|sociable|syndication|promo|advert|(?:^|[\s_-])ads?(?:$|[\s_-])|sponsor|outbrain|taboola|comment|breadcrumb|(?:^|[\s_-])tags?(?:$|[\s_-])|tag-?list|author|about-?the-?author|gallery|slideshow|read-?more|more-?stories|next-?post|paywall|donate|caption|credit|timestamp|byline|dateline|(?:^|[\s_-])meta(?:$|[\s_-])|hidden|hide|footer|widget/i;

/** Drops hinted furniture inside the chosen containers while it holds a small share of their text. */
export function pruneInside(roots: readonly Element[]): void {
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


/** Labels that open a "more stories" or sign-up section after an article. */
const TRAILER_LABEL =
  /^(?:most (?:popular|read|viewed|shared)|related(?: (?:articles?|stories|posts|content|coverage|news|reading|links))?|you (?:may|might) (?:also )?(?:like|enjoy)|recommended(?: (?:for you|stories|articles|reading))?|more (?:from|stories|news|on|in|like this)\b.*|(?:our )?latest (?:stories|news|articles|posts)|trending(?: now| stories)?|read (?:more|next|this next)|popular (?:posts|stories|articles)|top stories|editor'?s picks|what to read next|sponsored(?: content| stories)?|関連記事|おすすめ記事|você pode gostar\.*|leia também|veja também|lesen sie auch|mehr zum thema|à lire aussi|lire aussi|te puede interesar|también te puede interesar|noticias relacionadas|artículos relacionados|potrebbe interessarti anche)\s*:?$/i;

/** Drops a trailing "related stories" section: its label and everything after, once most of the text is behind. */
export function cutTrailingSections(blocks: ContentBlock[]): ContentBlock[] {
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

