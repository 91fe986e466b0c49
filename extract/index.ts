export { extractDocument, MAX_HTML_CHARS } from './extract.js';
export { countWords } from './content.js';
export type { ContentBlock, ExtractedDocument, HeadingBlock, TextBlock } from './types.js';
