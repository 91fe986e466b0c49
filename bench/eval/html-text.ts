import { Parser } from 'htmlparser2';

const HIDDEN = new Set(['script', 'style', 'rt', 'rp']);
const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd', 'mark', 'q', 'ruby', 'rb', 'rt', 'rp', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr', 'font']);

/**
 * Text content of an HTML fragment, block elements separated by spaces: what a gold standard written as HTML says.
 * Scripts, styles and ruby readings (<rt>, <rp>) are not text a reader reads.
 */
export function htmlText(html: string, options: { spaceInline?: boolean } = {}): string {
  // Inline elements inside a word (ruby bases, links in Japanese prose) must not split it; eval:extract keeps its
  // historical spacing (a space at every tag) so that its figures stay comparable across sessions.
  const spaceAt = (name: string): boolean => options.spaceInline !== false || !INLINE.has(name);
  const parts: string[] = [];
  let skip = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (HIDDEN.has(name)) skip++;
        if (spaceAt(name)) parts.push(' ');
      },
      ontext(text) {
        if (skip === 0) parts.push(text);
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) skip--;
        if (spaceAt(name)) parts.push(' ');
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return parts.join('').replace(/\s+/g, ' ').trim();
}
