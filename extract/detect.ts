import { NotaryError } from '../core/errors.js';
import type { ExtractedDocument } from './types.js';

/** Markers only bot challenges carry: the page is a challenge whatever else it holds. */
const CHALLENGE_MARKERS =
  /cf-challenge|challenge-platform|cf-browser-verification|cf_chl_opt|__cf_chl_|captcha-delivery\.com|px-captcha|_Incapsula_Resource|<title>\s*(?:just a moment\.\.\.|attention required! \| cloudflare|access denied|are you a robot\??|verifying you are human)/i;
/** CAPTCHA widgets and wording: a challenge only when the page has little else to say. */
const CAPTCHA_MARKERS =
  /g-recaptcha|recaptcha\/api\.js|hcaptcha\.com|h-captcha|cf-turnstile|turnstile\/v0|verify (?:that )?you are (?:a )?human|are you a robot|complete the security check|unusual traffic from your (?:computer|network)|press (?:&amp;|&) hold/i;
const LOGIN_WORDS = /\b(?:log ?in|sign ?in|signin|login|password|subscribe to (?:continue|read)|create an account)\b/i;
const PASSWORD_INPUT = /<input\b[^>]*type\s*=\s*["']?password/i;
/** A client-side app's mount point. */
const APP_ROOT = /<(?:div|main|body)\b[^>]*\bid\s*=\s*["']?(?:root|app|__next|__nuxt|___gatsby|svelte|main-app|application)["'\s>]/i;
const NEEDS_JS = /<noscript\b[^>]*>[\s\S]{0,400}?(?:enable|requires?|turn on|need)[\s\S]{0,40}?javascript/i;

/** Main content shorter than this is "too little" for the JS-shell and challenge heuristics. */
export const THIN_CONTENT_WORDS = 80;
/** Fewer words than this is no content at all. */
export const EMPTY_CONTENT_WORDS = 3;

export function isCaptchaPage(html: string, doc: ExtractedDocument): boolean {
  if (CHALLENGE_MARKERS.test(html.slice(0, 200_000))) return doc.wordCount < 400;
  return doc.wordCount < 150 && (CAPTCHA_MARKERS.test(html) || CAPTCHA_MARKERS.test(doc.text));
}

/** A password form with little else: a login wall (a long article with a login box in its header is not). */
export function isLoginWall(html: string, doc: ExtractedDocument): boolean {
  if (!PASSWORD_INPUT.test(html)) return false;
  return doc.wordCount < 150 && (LOGIN_WORDS.test(doc.text) || LOGIN_WORDS.test(doc.title ?? '') || doc.wordCount < 40);
}

/** Static HTML that a script is meant to fill: scripts, a mount point or a "needs JavaScript" note, and thin text. */
export function isJsShell(html: string, doc: ExtractedDocument): boolean {
  if (doc.wordCount >= THIN_CONTENT_WORDS) return false;
  const scripts = (html.match(/<script\b/gi) ?? []).length;
  if (scripts === 0) return false;
  return APP_ROOT.test(html) || NEEDS_JS.test(html) || doc.wordCount < EMPTY_CONTENT_WORDS * 4;
}

/**
 * Refuses pages that would otherwise come back as a "successful" extraction of junk: CAPTCHA/bot challenges,
 * login walls, and pages without main content. `rendered` says whether a browser already ran the page's scripts
 * (then an empty JS shell is reported as js_shell_empty).
 */
export function assertRealContent(html: string, doc: ExtractedDocument, rendered: boolean): void {
  if (isCaptchaPage(html, doc)) {
    throw new NotaryError('captcha_detected', 'the page is a CAPTCHA or bot challenge, not content');
  }
  if (isLoginWall(html, doc)) {
    throw new NotaryError('login_required', 'the page asks for a login and shows no content without one');
  }
  if (doc.wordCount < EMPTY_CONTENT_WORDS) {
    if (rendered || isJsShell(html, doc)) {
      throw new NotaryError('js_shell_empty', rendered ? 'the page stayed empty after rendering in a browser' : 'the page needs JavaScript to show content; try render: "auto" or "always"');
    }
    throw new NotaryError('empty_content', 'no main content was found on the page');
  }
}
