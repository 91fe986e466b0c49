import { INLINE_TAGS, WRAPPER_TAGS, countWords, hintsOf, linkDensity, rawText, textOf } from './element-text.js';
import { stripInvisible, type Element, type Node } from './html-tree.js';
import { normaliseSpace } from './metadata.js';
import type { BlockLink, ContentBlock, TextBlock } from './types.js';

const HEADING_LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
const PARAGRAPH_TAGS = new Set(['p', 'address', 'figcaption', 'summary', 'dt', 'caption', 'legend']);
/** Containers dropped inside the main content when they are mostly links (tables of contents, tag clouds). */
const LINK_CHECKED_TAGS = new Set(['ul', 'ol', 'dl', 'table', 'div', 'section', 'nav', 'menu', 'form', 'p']);
const ADMONITION = /(?:^|\s)(?:note|tip|warning|caution|important|admonition|callout|hint)(?:$|\s)/i;
const HAS_LETTER = /\p{L}/u;
/** Marks a <br>; two in a row split a paragraph. */
const BREAK = '\u2029';


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
    if (tag === 'td' && isMenuColumn(el)) return;
    const level = HEADING_LEVEL[tag];
    if (level !== undefined) {
      const text = textOf(el);
      if (!text) return;
      if (isAdmonitionLabel(el, text)) this.prefix = `${text}:`;
      else this.blocks.push({ type: 'heading', level, text });
      return;
    }
    // Keeping link lists (a page that is a table of contents) still leaves out menu lines: "Home | About | FAQ".
    if (!this.dropLinkLists && LINK_CHECKED_TAGS.has(tag) && linkDensity(el) > 0.5 && !holdsLinkList(el)) return;
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
        const text = stripInvisible(parts.join(''))
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

/**
 * The menu column of a page laid out in a table: a cell of links beside a cell in the same row that holds the
 * story (at least 200 characters of text that is not links, three times the menu's).
 */
function isMenuColumn(td: Element): boolean {
  const stats = td.stats;
  const row = td.parent;
  if (!stats || !row || row.tag !== 'tr' || linkDensity(td) <= 0.5) return false;
  return row.children.some((cell) => {
    if (typeof cell === 'string' || cell === td || cell.tag !== 'td' || !cell.stats || cell.stats.excluded) return false;
    const prose = cell.stats.textLength - cell.stats.linkLength;
    return prose >= 200 && prose >= stats.textLength * 3;
  });
}

const TABLE_OF_CONTENTS = /(?:^|[\s_-])toc(?:$|[\s_-])|table-?of-?contents/i;

function isTableOfContents(el: Element): boolean {
  const hints = hintsOf(el);
  return hints !== '' && TABLE_OF_CONTENTS.test(hints);
}

const LINK_LIST_TAGS = new Set(['ul', 'ol', 'dl', 'table']);

/** A list or table, or a wrapper around one (not a paragraph of links separated by bars). */
function holdsLinkList(el: Element): boolean {
  if (LINK_LIST_TAGS.has(el.tag)) return true;
  for (const child of el.children) {
    if (typeof child !== 'string' && !child.stats?.excluded && holdsLinkList(child)) return true;
  }
  return false;
}

/** A wrapper whose link-free text is long holds paragraphs beside its link lists: look inside rather than drop it. */
function holdsProse(el: Element): boolean {
  const stats = el.stats;
  return stats !== undefined && WRAPPER_TAGS.has(el.tag) && stats.textLength - stats.linkLength >= 200;
}

function isAdmonitionLabel(heading: Element, text: string): boolean {
  if (countWords(text) > 2) return false;
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

export function wordsOf(blocks: readonly ContentBlock[]): number {
  let n = 0;
  for (const b of blocks) n += countWords(b.text);
  return n;
}


export function charsOf(blocks: readonly ContentBlock[]): number {
  let n = 0;
  for (const b of blocks) n += b.text.length;
  return n;
}

export function emit(roots: readonly Element[], dropLinkLists: boolean): ContentBlock[] {
  const writer = new BlockWriter(dropLinkLists);
  for (const root of roots) {
    writer.children(root.children);
    writer.flush();
  }
  return writer.blocks;
}

