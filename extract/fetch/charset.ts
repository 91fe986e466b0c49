import { TextDecoder } from 'node:util';

/** How the charset of a text response was chosen. */
export type CharsetSource = 'bom' | 'header' | 'meta' | 'utf8-valid' | 'default';

export interface DecodedText {
  text: string;
  charset: string;
  source: CharsetSource;
}

/** Bytes of the document searched for a <meta charset> (the HTML spec's prescan looks at 1024; pages pad more). */
const META_SCAN_BYTES = 4096;

/** windows-1252's 0x80-0x9F (Node 20's TextDecoder decodes this label as ISO-8859-1, which leaves C1 controls). */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] ?? c);
}

function decodeWith(decoder: TextDecoder, bytes: Uint8Array): string {
  return decoder.encoding === 'windows-1252' ? decodeWindows1252(bytes) : decoder.decode(bytes);
}

function decoderFor(label: string | null | undefined): TextDecoder | null {
  if (!label) return null;
  try {
    return new TextDecoder(label.trim().replace(/^["']|["']$/g, ''));
  } catch {
    return null;
  }
}

export function charsetFromContentType(contentType: string | null): string | null {
  if (!contentType) return null;
  const match = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType);
  return match?.[2] ?? null;
}

function bomCharset(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/** <meta charset="x"> or <meta http-equiv="Content-Type" content="...; charset=x"> in the first bytes. */
export function metaCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.subarray(0, META_SCAN_BYTES)).toString('latin1');
  for (const match of head.matchAll(/<meta\b[^>]*>/gi)) {
    const tag = match[0];
    const direct = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag);
    if (direct?.[1]) return direct[1];
  }
  return null;
}

/**
 * Decodes a text document. Order: byte-order mark (as the HTML standard says, it beats the header), then the
 * Content-Type charset, then (HTML only) <meta charset>, then UTF-8 if the bytes are valid UTF-8, else
 * windows-1252 (what browsers assume for unlabelled Western pages). Unknown labels fall through to the next source.
 * A meta tag claiming UTF-16 is read as UTF-8, as browsers do (the bytes it sits in were readable as ASCII).
 */
export function decodeText(bytes: Uint8Array, contentType: string | null, isHtml: boolean): DecodedText {
  const bom = bomCharset(bytes);
  if (bom) {
    const decoder = new TextDecoder(bom);
    return { text: decoder.decode(bytes), charset: decoder.encoding, source: 'bom' };
  }
  const fromHeader = decoderFor(charsetFromContentType(contentType));
  if (fromHeader) return { text: decodeWith(fromHeader, bytes), charset: fromHeader.encoding, source: 'header' };
  if (isHtml) {
    let fromMeta = decoderFor(metaCharset(bytes));
    if (fromMeta?.encoding.startsWith('utf-16')) fromMeta = new TextDecoder('utf-8');
    if (fromMeta) return { text: decodeWith(fromMeta, bytes), charset: fromMeta.encoding, source: 'meta' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), charset: 'utf-8', source: 'utf8-valid' };
  } catch {
    return { text: decodeWindows1252(bytes), charset: 'windows-1252', source: 'default' };
  }
}
