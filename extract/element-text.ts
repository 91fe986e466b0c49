import type { Element } from './html-tree.js';
import { normaliseSpace } from './metadata.js';

export { countCommas, countWords } from './words.js';

/** Elements that flow inside a line of text; everything else breaks the line. */
export const INLINE_TAGS = new Set([
  'a', 'abbr', 'acronym', 'b', 'bdi', 'bdo', 'big', 'br', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i',
  'img', 'input', 'ins', 'kbd', 'label', 'mark', 'q', 'rb', 'rp', 'rt', 'ruby', 's', 'samp', 'small', 'span', 'strike',
  'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr', 'picture', 'source', 'output', 'meter', 'progress',
]);

export const WRAPPER_TAGS = new Set(['div', 'section', 'form']);

export function hintsOf(el: Element): string {
  const cls = el.attrs['class'];
  const id = el.attrs['id'];
  return cls && id ? `${cls} ${id}` : (cls ?? id ?? '');
}

export function visibleLength(text: string): number {
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

export function linkDensity(el: Element): number {
  const s = el.stats;
  return s && s.textLength > 0 ? s.linkLength / s.textLength : 0;
}

export function contains(ancestor: Element, el: Element): boolean {
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

export function rawText(el: Element, parts: string[]): void {
  for (const child of el.children) {
    if (typeof child === 'string') parts.push(child);
    else if (child.tag === 'br') parts.push('\n');
    else if (!child.stats?.excluded) rawText(child, parts);
  }
}
