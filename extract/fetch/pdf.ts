import { NotaryError } from '../../core/index.js';

export interface PdfText {
  text: string;
  title: string | null;
  author: string | null;
  pages: number;
}

/** Pages read from one PDF; the rest is ignored so a huge document cannot hold a request for minutes. */
const MAX_PDF_PAGES = 200;

/** Text of a PDF with pdf.js (legacy build, Node-compatible), one paragraph per text run that ends a line. */
export async function pdfToText(bytes: Uint8Array): Promise<PdfText> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  // pdf.js transfers the buffer to its worker; hand it a copy so the caller's bytes stay usable.
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    const doc = await task.promise;
    const pages: string[] = [];
    const count = Math.min(doc.numPages, MAX_PDF_PAGES);
    for (let n = 1; n <= count; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let line = '';
      const lines: string[] = [];
      for (const item of content.items) {
        if (!('str' in item)) continue;
        line += item.str;
        if (item.hasEOL) {
          lines.push(line);
          line = '';
        }
      }
      if (line) lines.push(line);
      pages.push(joinPdfLines(lines));
      page.cleanup();
    }
    const meta = await doc.getMetadata().catch(() => null);
    const info = (meta?.info ?? {}) as Record<string, unknown>;
    const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);
    return { text: pages.filter(Boolean).join('\n\n'), title: str(info['Title']), author: str(info['Author']), pages: doc.numPages };
  } catch (err) {
    if (err instanceof NotaryError) throw err;
    throw new NotaryError('unsupported_content_type', `the PDF could not be read: ${(err as Error).message}`);
  } finally {
    await task.destroy();
  }
}

/** Lines of a PDF page joined into paragraphs: a blank line or a short line ending in a full stop ends one. */
function joinPdfLines(lines: readonly string[]): string {
  const paragraphs: string[] = [];
  let current = '';
  for (const raw of lines) {
    const line = raw.replace(/\s+/g, ' ').trim();
    if (!line) {
      if (current) paragraphs.push(current);
      current = '';
      continue;
    }
    current = current ? (current.endsWith('-') ? current.slice(0, -1) + line : `${current} ${line}`) : line;
  }
  if (current) paragraphs.push(current);
  return paragraphs.join('\n\n');
}
