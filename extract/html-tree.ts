import { Parser } from 'htmlparser2';

/** A minimal element tree: only what content scoring and block output need (no DOM API, no entity re-encoding). */
export interface Element {
  tag: string;
  attrs: Record<string, string>;
  children: Node[];
  parent: Element | null;
  /** Filled by the scorer. */
  stats?: ElementStats;
}

export type Node = Element | string;

export interface ElementStats {
  /** Characters of visible text below this element (boilerplate subtrees excluded). */
  textLength: number;
  /** Of which inside <a>. */
  linkLength: number;
  commas: number;
  /** Dropped as boilerplate (navigation, footer, hidden, ...). */
  excluded: boolean;
  /** A <main>, <article> or role=main element lies below. */
  holdsMarkedContent: boolean;
  score: number;
  scored: boolean;
}

export interface HeadInfo {
  title: string | null;
  /** <meta name|property> values, keys lower-cased; the first occurrence wins. */
  meta: Map<string, string>;
  canonicalHref: string | null;
  lang: string | null;
  /** Raw text of <script type="application/ld+json"> elements. */
  jsonLd: string[];
}

export interface ParsedPage {
  body: Element;
  head: HeadInfo;
  /** <h1> elements in document order (title heuristics). */
  h1s: Element[];
  /** Elements that look like an author line (rel/itemprop/class "author", "byline"). */
  bylineCandidates: Element[];
  /** <noscript> elements (kept in the tree, excluded unless the page's content is only there). */
  noscripts: Element[];
  /** ids named by aria-controls: panels that tabs and accordions show and hide. */
  controlledIds: Set<string>;
}

/**
 * Characters that are invisible and belong to no word: soft hyphen, zero-width space, word joiner, BOM (also used
 * as a zero-width no-break space). Removed from text and metadata so that words are not split or glued with them.
 * Zero-width (non-)joiners stay: they change how Persian, Indic scripts and emoji render.
 */
const INVISIBLE = /[\u00ad\u200b\u2060\ufeff]/g;
const HAS_INVISIBLE = /[\u00ad\u200b\u2060\ufeff]/;

export function stripInvisible(text: string): string {
  return HAS_INVISIBLE.test(text) ? text.replace(INVISIBLE, '') : text;
}

/** Deeper nesting is flattened into the element at this depth, so recursive walks cannot overflow the stack. */
const MAX_DEPTH = 400;
const BYLINE_HINT = /byline|author|dateline|writtenby|p-author/i;

/** Elements whose content is never visible text. */
const SKIPPED_TAGS = new Set([
  'script',
  'style',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'embed',
  'canvas',
  'video',
  'audio',
  'select',
  'textarea',
  'button',
  // Ruby annotations: the reading printed above the base text (振り仮名, pinyin), not part of the sentence.
  'rt',
  'rp',
  'rtc',
]);

/**
 * Parses HTML in one streaming pass with htmlparser2, keeping only the body's element tree and the head's metadata.
 * Entities are decoded by the parser; text is kept raw (whitespace normalised later, except in <pre>).
 */
export function parseHtml(html: string): ParsedPage {
  const body: Element = { tag: 'body', attrs: {}, children: [], parent: null };
  const head: HeadInfo = { title: null, meta: new Map(), canonicalHref: null, lang: null, jsonLd: [] };
  const h1s: Element[] = [];
  const bylineCandidates: Element[] = [];
  const noscripts: Element[] = [];
  const controlledIds = new Set<string>();
  let current: Element = body;
  let depth = 0;
  // One entry per open tag outside skipped subtrees: whether it created an element (so its close pops one).
  const opened: boolean[] = [];
  // Depth inside a skipped subtree; >0 means text and elements there are dropped.
  let skipDepth = 0;
  let inTitle = false;
  let titleText = '';
  let jsonLdText: string | null = null;

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (skipDepth > 0) {
          skipDepth++;
          return;
        }
        switch (name) {
          case 'html':
            if (attrs['lang']) head.lang = attrs['lang'];
            else if (attrs['xml:lang']) head.lang = attrs['xml:lang'];
            opened.push(false);
            return;
          case 'head':
            opened.push(false);
            return;
          case 'body':
            Object.assign(body.attrs, attrs);
            opened.push(false);
            return;
          case 'title':
            if (head.title === null) inTitle = true;
            skipDepth = 1;
            return;
          case 'meta':
            recordMeta(head, attrs);
            opened.push(false);
            return;
          case 'link':
            if (head.canonicalHref === null && attrs['href'] && /(?:^|\s)canonical(?:\s|$)/i.test(attrs['rel'] ?? '')) {
              head.canonicalHref = attrs['href'];
            }
            opened.push(false);
            return;
          case 'script':
            if ((attrs['type'] ?? '').toLowerCase() === 'application/ld+json') jsonLdText = '';
            skipDepth = 1;
            return;
        }
        if (SKIPPED_TAGS.has(name)) {
          skipDepth = 1;
          return;
        }
        if (depth >= MAX_DEPTH) {
          opened.push(false);
          return;
        }
        opened.push(true);
        const element: Element = { tag: name, attrs, children: [], parent: current };
        current.children.push(element);
        current = element;
        depth++;
        if (name === 'h1') h1s.push(element);
        else if (name === 'noscript') noscripts.push(element);
        const controls = attrs['aria-controls'];
        if (controls) for (const id of controls.split(/\s+/)) if (id) controlledIds.add(id);
        if (
          bylineCandidates.length < 10 &&
          (attrs['rel'] === 'author' ||
            (attrs['itemprop'] ?? '').includes('author') ||
            BYLINE_HINT.test((attrs['class'] ?? '') + ' ' + (attrs['id'] ?? '')))
        ) {
          bylineCandidates.push(element);
        }
      },
      ontext(text) {
        if (skipDepth > 0) {
          if (inTitle) titleText += text;
          else if (jsonLdText !== null) jsonLdText += text;
          return;
        }
        // Invisible characters stay in the tree: normaliseSpace removes them from every text written out.
        const children = current.children;
        const last = children[children.length - 1];
        if (typeof last === 'string') children[children.length - 1] = last + text;
        else children.push(text);
      },
      onclosetag() {
        if (skipDepth > 0) {
          skipDepth--;
          if (skipDepth === 0) {
            if (inTitle) {
              head.title = stripInvisible(titleText);
              inTitle = false;
            } else if (jsonLdText !== null) {
              head.jsonLd.push(stripInvisible(jsonLdText));
              jsonLdText = null;
            }
          }
          return;
        }
        if (opened.pop() === true && current.parent) {
          current = current.parent;
          depth--;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();
  return { body, head, h1s, bylineCandidates, noscripts, controlledIds };
}

function recordMeta(head: HeadInfo, attrs: Record<string, string>): void {
  const raw = attrs['content'];
  if (raw === undefined) return;
  const content = stripInvisible(raw);
  for (const keyAttr of ['property', 'name', 'itemprop', 'http-equiv']) {
    const raw = attrs[keyAttr];
    if (!raw) continue;
    // Some sites put several names in one attribute ("og:title twitter:title").
    for (const key of raw.toLowerCase().split(/\s+/)) {
      if (key && !head.meta.has(key)) head.meta.set(key, content);
    }
  }
}
