import { comparableText } from '../core/index.js';
import { isSameTitle } from './extract.js';
import type { BlockLink, ContentBlock, ExtractedDocument, TextBlock } from './types.js';
import { countWords } from './words.js';

export type OutputMode = 'excerpt' | 'text' | 'markdown' | 'html';
export const OUTPUT_MODES: readonly OutputMode[] = ['excerpt', 'text', 'markdown', 'html'];

/** Scores passages against a query (higher is better); the lead backs it with the reranker. */
export type ScorePassages = (query: string, passages: string[]) => Promise<number[]>;

/** Blocks among the first few that repeat the title once it has been said (a heading and a lead that copies it). */
const TITLE_BLOCKS = 3;

/**
 * Main content as plain text: blocks separated by blank lines, list items and table rows one a line. The article's
 * own heading is kept, as in markdown, once: a second block among the first three that repeats the title is left out.
 */
export function renderText(doc: ExtractedDocument): string {
  const titleKey = doc.title ? comparableText(doc.title) : null;
  let titleSaid = false;
  const kept: string[] = [];
  doc.blocks.forEach((block, i) => {
    if (titleKey && i < TITLE_BLOCKS && isSameTitle(comparableText(block.text), titleKey)) {
      if (titleSaid) return;
      titleSaid = true;
    }
    kept.push(block.text);
  });
  return kept.join('\n\n');
}

function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_[\]<>])/g, '\\$1');
}

function escapeMarkdownCell(text: string): string {
  return escapeMarkdown(text).replace(/\|/g, '\\|');
}

/** Replaces each link's text (first occurrence after the previous link) with a rendered link. */
function linkify(text: string, links: readonly BlockLink[] | undefined, escape: (s: string) => string, render: (text: string, href: string) => string): string {
  if (!links || links.length === 0) return escape(text);
  let out = '';
  let from = 0;
  for (const link of links) {
    const at = text.indexOf(link.text, from);
    if (at < 0) continue;
    out += escape(text.slice(from, at)) + render(link.text, link.href);
    from = at + link.text.length;
  }
  return out + escape(text.slice(from));
}

function markdownInline(text: string, links: readonly BlockLink[] | undefined): string {
  return linkify(text, links, escapeMarkdown, (t, href) => `[${escapeMarkdown(t)}](${href.replace(/[()\s]/g, encodeURIComponent)})`);
}

function linksFor(text: string, block: TextBlock): BlockLink[] | undefined {
  return block.links?.filter((l) => text.includes(l.text));
}

/** Main content as Markdown: headings, paragraphs, lists, links, tables (GFM pipes), code fences and quotes. */
export function renderMarkdown(doc: ExtractedDocument): string {
  const parts: string[] = [];
  for (const block of doc.blocks) {
    const md = markdownBlock(block);
    if (md) parts.push(md);
  }
  return parts.join('\n\n');
}

function markdownBlock(block: ContentBlock): string {
  if (block.type === 'heading') return `${'#'.repeat(Math.min(Math.max(block.level, 1), 6))} ${escapeMarkdown(block.text)}`;
  switch (block.type) {
    case 'paragraph':
      return markdownInline(block.text, block.links);
    case 'quote':
      return markdownInline(block.text, block.links)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'code': {
      const fence = block.text.includes('```') ? '~~~~' : '```';
      return `${fence}\n${block.text}\n${fence}`;
    }
    case 'list': {
      const items = block.items ?? block.text.split('\n');
      return items.map((item, i) => `${block.ordered ? `${i + 1}.` : '-'} ${markdownInline(item, linksFor(item, block))}`).join('\n');
    }
    case 'table': {
      const rows = block.rows ?? block.text.split('\n').map((line) => line.split(' | '));
      if (rows.length === 0) return '';
      const width = Math.max(...rows.map((r) => r.length));
      const pad = (row: string[]): string[] => [...row, ...Array<string>(width - row.length).fill('')];
      const line = (row: string[]): string => `| ${pad(row).map((cell) => escapeMarkdownCell(cell)).join(' | ')} |`;
      const [first, ...rest] = rows;
      const header = block.headerRow && first ? first : Array<string>(width).fill('');
      const body = block.headerRow ? rest : rows;
      return [line(header), `| ${Array<string>(width).fill('---').join(' | ')} |`, ...body.map(line)].join('\n');
    }
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function htmlInline(text: string, links: readonly BlockLink[] | undefined): string {
  return linkify(text, links, escapeHtml, (t, href) => `<a href="${escapeHtml(href)}">${escapeHtml(t)}</a>`);
}

/**
 * Cleaned main-content HTML rebuilt from the blocks: only h1-h6, p, ul/ol/li, table/thead/tbody/tr/th/td,
 * pre/code, blockquote and a[href]; no attributes besides href, no scripts, styles or event handlers.
 */
export function renderHtml(doc: ExtractedDocument): string {
  const parts: string[] = [];
  for (const block of doc.blocks) {
    if (block.type === 'heading') {
      const level = Math.min(Math.max(block.level, 1), 6);
      parts.push(`<h${level}>${escapeHtml(block.text)}</h${level}>`);
      continue;
    }
    switch (block.type) {
      case 'paragraph':
        parts.push(`<p>${htmlInline(block.text, block.links)}</p>`);
        break;
      case 'quote':
        parts.push(`<blockquote><p>${htmlInline(block.text, block.links)}</p></blockquote>`);
        break;
      case 'code':
        parts.push(`<pre><code>${escapeHtml(block.text)}</code></pre>`);
        break;
      case 'list': {
        const tag = block.ordered ? 'ol' : 'ul';
        const items = (block.items ?? block.text.split('\n')).map((item) => `<li>${htmlInline(item, linksFor(item, block))}</li>`);
        parts.push(`<${tag}>${items.join('')}</${tag}>`);
        break;
      }
      case 'table': {
        const rows = block.rows ?? block.text.split('\n').map((line) => line.split(' | '));
        const [first, ...rest] = rows;
        const head = block.headerRow && first ? `<thead><tr>${first.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr></thead>` : '';
        const bodyRows = block.headerRow ? rest : rows;
        const body = bodyRows.map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('');
        parts.push(`<table>${head}<tbody>${body}</tbody></table>`);
        break;
      }
    }
  }
  return parts.join('\n');
}

/** Share of a block's text inside its links. */
function linkShare(block: TextBlock): number {
  if (!block.links || block.text.length === 0) return 0;
  let chars = 0;
  for (const link of block.links) chars += link.text.length;
  return Math.min(1, chars / block.text.length);
}

/**
 * Passages an excerpt is chosen from: paragraphs and quotes of at least a few words (lists as one passage), not
 * lines that are mostly links (a language switcher, a "see also" line).
 */
export function excerptPassages(doc: ExtractedDocument): string[] {
  const passages: string[] = [];
  for (const block of doc.blocks) {
    if (block.type === 'heading' || block.type === 'code' || block.type === 'table' || linkShare(block) > 0.5) continue;
    const text = block.type === 'list' ? block.text.replace(/\n/g, '; ') : block.text;
    if (countWords(text) >= 8) passages.push(text);
  }
  if (passages.length === 0) {
    for (const block of doc.blocks) if (block.type !== 'heading' && block.text.trim()) passages.push(block.text);
  }
  return passages;
}

const EXCERPT_MAX_CHARS = 1200;

/**
 * The most informative 1-3 paragraphs. Without a query: the first substantial paragraphs (news and reference pages
 * put the answer first), up to about 1,200 characters. With a query and a scorer: the best-scoring passages, best
 * first.
 */
export async function pickExcerpt(doc: ExtractedDocument, query?: string, scorePassages?: ScorePassages): Promise<string> {
  const passages = excerptPassages(doc);
  if (passages.length === 0) return '';
  let chosen: number[];
  if (query && query.trim() && scorePassages && passages.length > 1) {
    const scores = await scorePassages(query.trim(), passages);
    const order = passages.map((_, i) => i).sort((a, b) => (scores[b] ?? -Infinity) - (scores[a] ?? -Infinity));
    chosen = [];
    let chars = 0;
    for (const i of order) {
      if (chosen.length >= 3) break;
      const len = passages[i]?.length ?? 0;
      if (chosen.length > 0 && chars + len > EXCERPT_MAX_CHARS) continue;
      chosen.push(i);
      chars += len;
    }
  } else {
    chosen = [];
    let chars = 0;
    for (let i = 0; i < passages.length && chosen.length < 3; i++) {
      const len = passages[i]?.length ?? 0;
      if (chosen.length > 0 && chars + len > EXCERPT_MAX_CHARS) break;
      chosen.push(i);
      chars += len;
      if (chars >= 400) break;
    }
  }
  return chosen.map((i) => passages[i] ?? '').join('\n\n');
}

/** The document in the requested mode ('excerpt' is async because it may call the scorer). */
export async function renderDocument(doc: ExtractedDocument, mode: OutputMode, query?: string, scorePassages?: ScorePassages): Promise<string> {
  switch (mode) {
    case 'text':
      return renderText(doc);
    case 'markdown':
      return renderMarkdown(doc);
    case 'html':
      return renderHtml(doc);
    case 'excerpt':
      return pickExcerpt(doc, query, scorePassages);
  }
}
