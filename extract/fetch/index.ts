export { blockedAddressReason, parseHttpUrl, systemResolver, vetHost } from './address-policy.js';
export type { AddressPolicy, HostResolver, ResolvedAddress } from './address-policy.js';
export { FetchCache } from './cache.js';
export { charsetFromContentType, decodeText, metaCharset } from './charset.js';
export type { CharsetSource, DecodedText } from './charset.js';
export { pdfToText } from './pdf.js';
export type { PdfText } from './pdf.js';
export { FETCH_DEFAULTS, RobotsRules, safeFetch } from './safe-fetch.js';
export type { DocumentKind, FetchedDocument, SafeFetchOptions } from './safe-fetch.js';
