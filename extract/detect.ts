import { NotaryError } from '../core/index.js';
import type { ContentBlock, ExtractedDocument } from './types.js';
import { countLetterWords, countWords } from './words.js';

/**
 * Walls are judged by the page's main content, not by what else the HTML carries: a reCAPTCHA in a comment form, a
 * login box in a header, or the bot-detection script Cloudflare injects into ordinary pages do not make a page with
 * content a wall. Each detector asks: is the main content thin, and is what there is of it the wall?
 */

/** Markup only a challenge page has (the interstitial itself, not the script injected into normal pages). */
const CHALLENGE_PAGE =
  /_cf_chl_opt|cf-browser-verification|cf_chl_prog|id=["']?(?:challenge-form|cf-challenge-running|challenge-running|challenge-body-text)|captcha-delivery\.com|px-captcha|_Incapsula_Resource|ddos-guard\.net\/|sucuri_cloudproxy_js/i;
/** Titles of challenge interstitials (the whole title, not a headline that mentions one). */
const CHALLENGE_TITLE =
  /<title[^>]*>\s*(?:just a moment\.*|attention required!?(?: \| cloudflare)?|access denied|are you a robot\??|verifying you are human\.*|security check|one more step|please wait\.*|ddos-guard|checking your browser[^<]{0,40}|human verification|bot verification|pardon our interruption\.*)\s*<\/title>/i;
/** CAPTCHA widgets. */
const CAPTCHA_WIDGET = /g-recaptcha|recaptcha\/api\.js|hcaptcha\.com|h-captcha|cf-turnstile|turnstile\/v0|arkoselabs|funcaptcha|geetest/i;
/** What a challenge says to the visitor. */
const CHALLENGE_WORDING =
  /verify (?:that )?you(?:'re| are) (?:a )?human|are you a robot|i(?:'m| am) not a robot|complete the security check|unusual traffic from your (?:computer|network)|checking (?:if the site connection is secure|your browser)|needs to review the security of your connection|enable javascript and cookies to continue|press (?:&|and) hold|please enable js and disable any ad ?blocker|why do i have to complete a captcha|solve (?:this|the) (?:captcha|puzzle)/i;

const PASSWORD_INPUT = /<input\b[^>]*type\s*=\s*["']?password/i;
/** A login or subscription wall speaking: not a mention of signing in somewhere in an article. */
const LOGIN_CALL =
  /\b(?:log ?in|sign ?in)\b[^.!?\n]{0,40}\bto (?:continue|keep reading|read|view|access|see|download|comment)\b|\byou (?:must|need to) (?:be )?(?:logged|signed) in\b|\bplease (?:log ?in|sign ?in)\b|\bmembers only\b|\bsubscribe to (?:continue|keep) reading\b|\b(?:this|the) (?:article|content|page|story) is (?:only )?(?:for|available to) (?:subscribers|members)\b|\bcreate (?:an|a free) account to (?:continue|read|view)\b/i;
/** A login asked for to comment on the page, not to read it: "Please log in to comment on this story." */
const COMMENT_LOGIN_CALL = /[^.!?\n]{0,40}\b(?:log ?in|sign ?in|register)\b[^.!?\n]{0,40}\bto (?:comment|reply|leave a (?:comment|reply)|post a comment|join the discussion)\b[^.!?\n]*[.!?]?/gi;
const LOGIN_TITLE = /^\s*(?:log ?in|login|sign ?in|signin|member login|account login)\b/i;

/** A client-side app's mount point left empty by the server (a server-rendered app fills it). */
const EMPTY_APP_ROOT =
  /<(div|main|section|app-root)\b[^>]*\bid\s*=\s*["']?(?:root|app|__next|__nuxt|___gatsby|svelte|main-app|application|app-root)["']?[^>]*>\s*(?:<!--[\s\S]*?-->\s*)*(?:<noscript\b[\s\S]*?<\/noscript>\s*)?<\/\1>/i;
const NEEDS_JS = /<noscript\b[^>]*>[\s\S]{0,400}?(?:enable|requires?|turn on|need)[\s\S]{0,40}?javascript/i;

/** Main content shorter than this is "too little" for the JS-shell and challenge heuristics. */
export const THIN_CONTENT_WORDS = 80;
/** Fewer words than this is no content at all. */
export const EMPTY_CONTENT_WORDS = 3;
/** A page this thin that carries a CAPTCHA widget is the widget's page. */
const WIDGET_PAGE_WORDS = 20;

const SEARCH_LIMIT = 200_000;

function mainText(doc: ExtractedDocument): string {
  return `${doc.title ?? ''}\n${doc.text}`;
}

/**
 * A CAPTCHA or bot challenge: a challenge page's own markup or title with thin content, a CAPTCHA widget on a page
 * that has almost nothing else, or challenge wording in thin main content. A page with real content is never one.
 */
export function isCaptchaPage(html: string, doc: ExtractedDocument): boolean {
  const head = html.slice(0, SEARCH_LIMIT);
  const wording = CHALLENGE_WORDING.test(mainText(doc));
  if (CHALLENGE_TITLE.test(head)) return doc.wordCount < THIN_CONTENT_WORDS || (wording && doc.wordCount < 150);
  if (CHALLENGE_PAGE.test(head)) return doc.wordCount < THIN_CONTENT_WORDS || (wording && doc.wordCount < 150);
  if (doc.wordCount >= THIN_CONTENT_WORDS) return false;
  if (wording) return true;
  return doc.wordCount < WIDGET_PAGE_WORDS && CAPTCHA_WIDGET.test(head);
}

/**
 * A login wall: a password form, and main content that is thin and asks for a login (or a page titled "Sign in").
 * A password box in a header menu beside an article, an article that mentions signing in, or a short article that
 * asks for a login to comment on it, is not one.
 */
export function isLoginWall(html: string, doc: ExtractedDocument): boolean {
  if (doc.wordCount >= 150 || !PASSWORD_INPUT.test(html)) return false;
  const firstHeading = doc.blocks.find((b) => b.type === 'heading')?.text ?? '';
  return LOGIN_CALL.test(mainText(doc).replace(COMMENT_LOGIN_CALL, ' ')) || LOGIN_TITLE.test(doc.title ?? '') || LOGIN_TITLE.test(firstHeading) || doc.wordCount < EMPTY_CONTENT_WORDS * 4;
}

/**
 * Static HTML that a script is meant to fill: thin main content, scripts, and an empty mount point, a "needs
 * JavaScript" note, or next to no text at all. A server-rendered app with its text in place is not a shell.
 */
export function isJsShell(html: string, doc: ExtractedDocument): boolean {
  if (doc.wordCount >= THIN_CONTENT_WORDS) return false;
  const scripts = (html.match(/<script\b/gi) ?? []).length;
  if (scripts === 0) return false;
  return EMPTY_APP_ROOT.test(html) || NEEDS_JS.test(html) || doc.wordCount < EMPTY_CONTENT_WORDS * 4;
}

/** Copyright and licence lines, in the languages of the fixtures and a few more: kept in the text, but not content a page exists for. */
const RIGHTS_LINE =
  /^(?:copyright\b|©|\(c\) \d{4})|\ball rights reserved\b|^licensed under\b|版权所有|版權所有|著作権|無断(?:転載|複製)|저작권|무단 ?전재|все права защищены|جميع الحقوق محفوظة|כל הזכויות שמורות|सर्वाधिकार सुरक्षित|สงวนลิขสิทธิ์|με επιφύλαξη παντός δικαιώματος|tous droits réservés|alle rechte vorbehalten|todos los derechos reservados|tutti i diritti riservati/i;

function linkShare(block: ContentBlock): number {
  if (block.type === 'heading' || !block.links || block.text.length === 0) return 0;
  let chars = 0;
  for (const link of block.links) chars += link.text.length;
  return Math.min(1, chars / block.text.length);
}

/** Link lists that together hold this many items are a page's content (an index, a site map), not a menu. */
const INDEX_LIST_ITEMS = 10;
/**
 * Headings that carry the page: this many of them of 3 words or more, holding this many words together (a checklist
 * written as `<h4><li>` items). A title or a tagline alone is not content.
 */
const CONTENT_HEADINGS = 3;
const CONTENT_HEADING_WORDS = 20;
/** Short lines of prose that carry the page together (a poem, lyrics): this many of 3 words or more, this many words. */
const CONTENT_LINES = 6;
const CONTENT_LINE_WORDS = 30;

/**
 * Whether the main content holds anything a reader came for: a sentence of prose (8 words or more, not mostly
 * links), short lines that together make a text (a poem), headings that carry the page, a code block, a table, a list
 * that is not mostly links, or link lists long enough to be an index. A
 * menu line and a tagline ("Modules | Directives | FAQ", "Example Server Version 2.4") are not content.
 */
export function hasSubstance(doc: ExtractedDocument): boolean {
  let linkListItems = 0;
  let headings = 0;
  let headingWords = 0;
  let lines = 0;
  let lineWords = 0;
  for (const block of doc.blocks) {
    switch (block.type) {
      case 'heading': {
        const words = countLetterWords(block.text);
        if (words < 3) break;
        headings++;
        headingWords += words;
        if (headings >= CONTENT_HEADINGS && headingWords >= CONTENT_HEADING_WORDS) return true;
        break;
      }
      case 'code':
      case 'table':
        return true;
      case 'list': {
        if (linkShare(block) < 0.5) return true;
        linkListItems += block.items?.length ?? block.text.split('\n').length;
        if (linkListItems >= INDEX_LIST_ITEMS) return true;
        break;
      }
      default: {
        if (linkShare(block) >= 0.5 || RIGHTS_LINE.test(block.text)) break;
        const words = countLetterWords(block.text);
        if (words >= 8) return true;
        if (words < 3) break;
        lines++;
        lineWords += words;
        if (lines >= CONTENT_LINES && lineWords >= CONTENT_LINE_WORDS) return true;
      }
    }
  }
  return false;
}

/** Body text as a reader sees it, roughly: markup, scripts, styles, comments and the head cut out. */
function roughBodyText(html: string): string {
  return html
    .replace(/<head\b[\s\S]*?<\/head>/i, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ');
}

/** Pages this small are read whole to see whether the main content is all there is. */
const BARE_PAGE_CHARS = 20_000;

/**
 * A page that is nothing but its text: no scripts, and the main content holds every word of the body (no
 * navigation, no footer, nothing set aside). However short ("Test", two captions under pictures), that text is what
 * the page is for, not boilerplate left over.
 */
function isBarePage(html: string, doc: ExtractedDocument): boolean {
  if (html.length > BARE_PAGE_CHARS || /<script\b/i.test(html)) return false;
  const pageWords = countWords(roughBodyText(html).replace(/&[#\w]+;/g, ' '));
  return pageWords > 0 && doc.wordCount >= pageWords;
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
  if (doc.wordCount === 0 || ((doc.wordCount < EMPTY_CONTENT_WORDS || !hasSubstance(doc)) && !isBarePage(html, doc))) {
    if (rendered || isJsShell(html, doc)) {
      throw new NotaryError('js_shell_empty', rendered ? 'the page stayed empty after rendering in a browser' : 'the page needs JavaScript to show content; try render: "auto" or "always"');
    }
    throw new NotaryError('empty_content', 'no main content was found on the page (navigation and boilerplate only)');
  }
}
