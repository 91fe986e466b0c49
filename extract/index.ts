export { extractDocument, MAX_HTML_CHARS } from './extract.js';
export { countWords } from './content.js';
export type { ContentBlock, ExtractedDocument, HeadingBlock, TextBlock } from './types.js';
export type { BlockLink } from './types.js';
export * from './fetch/index.js';
export * from './render/index.js';
export { assertRealContent, isCaptchaPage, isJsShell, isLoginWall } from './detect.js';
export { OUTPUT_MODES, escapeHtml, excerptPassages, pickExcerpt, renderDocument, renderHtml, renderMarkdown, renderText } from './output.js';
export type { OutputMode, ScorePassages } from './output.js';
export {
  RENDER_POLICIES,
  createExtractDeps,
  documentFromText,
  extractLocalFile,
  extractLocalHtml,
  extractSettings,
  extractUrl,
  parseExtractRequest,
} from './extract-url.js';
export type { ExtractDeps, ExtractRequest, ExtractResult, ExtractSettings, RenderPolicy } from './extract-url.js';
export { detectPageDates, urlDate } from './dates.js';
export type { DateCandidate, DateFinding, DateInput, DateSource, HeaderBag, PageDates } from './dates.js';
export { parseDateValue } from './date-parse.js';
export type { DatePrecision, ParsedDate } from './date-parse.js';
export { learnSiteTitleAffixes, type SiteTitleAffixes } from './site-title.js';
