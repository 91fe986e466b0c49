import { Parser } from 'htmlparser2';

/**
 * One streaming htmlparser2 pass over a page that keeps what dating it needs: <meta> values, JSON-LD blocks, <time>
 * and microdata date elements with where they stand (offset in the visible text, inside comments or sidebars or
 * not), and the <h1>s the article header is found by. No tree is built.
 */

/** A <meta> with a name, property, itemprop or http-equiv; keys lower-cased. */
export interface MetaValue {
  key: string;
  content: string;
  /** Inside comments, sidebars, related lists (microdata <meta itemprop> in the body). */
  aside: boolean;
}

/**
 * A <time>, an element with itemprop datePublished / dateModified / dateCreated, a microformat (`published`,
 * `dt-updated` with a title or datetime), or a short element whose class names a date (`post-date`, `storyDate`).
 */
export interface DateElement {
  /** datetime, content or (microformats) title attribute, else the element's text. */
  value: string;
  /** What was read: `time[datetime]`, `abbr.published[title]`, `span.post-date text`, `itemprop=datePublished`. */
  detail: string;
  /** The value is the element's text as people read it (a time without a zone there is the site's local time). */
  text: boolean;
  /** What the element says it is: itemprop, class (published, updated) or the words just before it ("Updated:"). */
  role: 'published' | 'modified' | null;
  /** Characters of visible text before the element. */
  offset: number;
  aside: boolean;
  /** Inside an <article>, <main> or role=main. */
  inMain: boolean;
  /** Index of the outermost <article> it is in, or -1. */
  article: number;
  itemprop: boolean;
}

export interface HeadingMark {
  text: string;
  start: number;
  end: number;
  aside: boolean;
  inMain: boolean;
}

export interface DateScan {
  title: string;
  metas: MetaValue[];
  jsonLd: string[];
  elements: DateElement[];
  h1s: HeadingMark[];
  /** Outermost <article> elements outside comments and sidebars: more than one is a listing. */
  articles: number;
}

/** Class, id, role and itemprop words that put an element out of the article: comments, sidebars, teaser lists. */
const ASIDE_HINT =
  /comment|repl(?:y|ies)|disqus|sidebar|related|recommend|widget|teaser|promo|trending|popular|most-?read|newsletter|outbrain|taboola|read-?next|up-?next|more-?stories|complementary|infobox/i;
const ASIDE_TAGS = new Set(['aside', 'nav']);
/** Elements that hold the whole page: their classes describe its layout ("has-sidebar", "comments-open"). */
const PAGE_TAGS = new Set(['html', 'body', 'main', 'article']);
/** Tokens about a page's layout or state, not what the element is: "has-sidebar", "with-comments", "no-related". */
const QUALIFIED_TOKEN = /^(?:has|with|without|no|show|hide|enable|disable|allow)[-_]|[-_](?:open|closed|enabled|disabled|count|link|icon)$/i;

function isAsideHint(hints: string): boolean {
  if (!ASIDE_HINT.test(hints)) return false;
  return hints.split(/\s+/).some((token) => ASIDE_HINT.test(token) && !QUALIFIED_TOKEN.test(token));
}
const RAW_TAGS = new Set(['script', 'style', 'template', 'noscript', 'textarea', 'svg']);
/** Microformat classes of dates that are not the page's: an event's start and end, a birthday, a deadline. */
const OTHER_DATE_CLASS = /\b(?:bday|dtstart|dtend|dtreviewed|deadline|expir(?:y|es))\b/i;
/** Class names of elements that hold a date as text (byline dates, datelines, microformats). */
const DATE_CLASS = /date|published|posted|timestamp|updated|modified/i;
/** Label words at the start of a date's own text ("Updated: Sat 8:31 PM, Feb 17, 2018"). */
const LEADING_LABEL = /^(?:(?:first\s+|last\s+)?(?:published|posted|updated|modified|edited|date)\b\s*:?\s*(?:on\b)?\s*|on\s+)/i;
const PUBLISHED_HINT = /published|posted|pubdate|date-?created|datecreated|publish|issued/i;
const MODIFIED_HINT = /modified|updated|update|edited|revised/i;
const MODIFIED_LABEL = /(?:updated|modified|edited|revised|last change[ds]?|aktualisiert|mis à jour|actualizado|aggiornato)\W{0,3}(?:on|at|am|le|el)?\W{0,3}$/i;
/** "Published:", "Posted by Jo Smith on", "Veröffentlicht am" just before the date. */
const PUBLISHED_LABEL =
  /(?:published|posted|first published|veröffentlicht|publié|publicado|pubblicato)(?:\s+by\s+[^.!?\n]{1,60}?)?\W{0,3}(?:on|at|am|le|el)?\W{0,3}$/i;

interface Capture {
  text: string;
  done: (text: string) => void;
}

/**
 * At most this many elements collect their text at once, each at most CAPTURE_CHARS: an unclosed <h1> or thousands
 * of nested <time>s cannot make every text node cost the depth of the document.
 */
const MAX_OPEN_CAPTURES = 16;
const CAPTURE_CHARS = 200;

interface Frame {
  tag: string;
  aside: boolean;
  inMain: boolean;
  article: number;
  raw: boolean;
  /** Open capture of this element's text (a date element without an attribute value, or an <h1>). */
  capture: Capture | null;
}

function hintsOf(attrs: Record<string, string>): string {
  return `${attrs['class'] ?? ''} ${attrs['id'] ?? ''} ${attrs['role'] ?? ''} ${attrs['itemprop'] ?? ''} ${attrs['itemtype'] ?? ''}`;
}

function roleOf(hints: string, before: string): DateElement['role'] {
  if (MODIFIED_LABEL.test(before)) return 'modified';
  if (PUBLISHED_LABEL.test(before)) return 'published';
  if (MODIFIED_HINT.test(hints)) return 'modified';
  if (PUBLISHED_HINT.test(hints)) return 'published';
  return null;
}

export function scanForDates(html: string): DateScan {
  const scan: DateScan = { title: '', metas: [], jsonLd: [], elements: [], h1s: [], articles: 0 };
  const root: Frame = { tag: '#root', aside: false, inMain: false, article: -1, raw: false, capture: null };
  const stack: Frame[] = [root];
  let offset = 0;
  // The last visible characters, for labels such as "Updated:" just before a date.
  let recent = '';
  let articleCount = 0;
  // Open elements whose text is being collected.
  const captures = new Set<Capture>();
  let inTitle = false;
  let jsonLd: string | null = null;

  const parser = new Parser(
    {
      onopentag(tag, attrs) {
        const parent = stack[stack.length - 1] ?? root;
        const hints = hintsOf(attrs);
        const aside =
          parent.aside ||
          ASIDE_TAGS.has(tag) ||
          (tag === 'footer' && parent.article < 0) ||
          /schema\.org\/comment/i.test(attrs['itemtype'] ?? '') ||
          (!PAGE_TAGS.has(tag) && isAsideHint(hints));
        const main = tag === 'main' || tag === 'article' || attrs['role'] === 'main' || /articlebody/i.test(attrs['itemprop'] ?? '');
        let article = parent.article;
        if (tag === 'article' && article < 0) {
          article = articleCount++;
          if (!aside) scan.articles++;
        }
        const frame: Frame = { tag, aside, inMain: parent.inMain || main, article, raw: parent.raw || RAW_TAGS.has(tag), capture: null };
        stack.push(frame);
        if (tag === 'title' && !scan.title) inTitle = true;
        if (tag === 'script' && (attrs['type'] ?? '').toLowerCase() === 'application/ld+json') jsonLd = '';
        if (tag === 'meta') {
          const content = attrs['content'];
          if (content === undefined) return;
          for (const keyAttr of ['property', 'name', 'itemprop', 'http-equiv']) {
            for (const key of (attrs[keyAttr] ?? '').toLowerCase().split(/\s+/)) {
              if (key) scan.metas.push({ key, content, aside: frame.aside });
            }
          }
          return;
        }
        if (frame.raw) return;
        const itemprop = /\bdate(?:published|modified|created)\b/i.test(attrs['itemprop'] ?? '');
        const dateClass = DATE_CLASS.test(attrs['class'] ?? '');
        if ((tag === 'time' || itemprop || dateClass) && !OTHER_DATE_CLASS.test(attrs['class'] ?? '')) {
          const attribute = ['datetime', 'content', ...(dateClass ? ['title'] : [])].find((a) => attrs[a] !== undefined) ?? null;
          const value = attribute === null ? null : (attrs[attribute] ?? null);
          const described = tag === 'time' ? 'time' : `${tag}.${(attrs['class'] ?? '').trim().split(/\s+/)[0] ?? ''}`;
          const element: DateElement = {
            value: value ?? '',
            detail: itemprop
              ? `itemprop=${/modified/i.test(attrs['itemprop'] ?? '') ? 'dateModified' : 'datePublished'}`
              : `${described}${attribute === null ? ' text' : `[${attribute}]`}`,
            text: value === null,
            role: itemprop
              ? /modified/i.test(attrs['itemprop'] ?? '') ? 'modified' : 'published'
              : roleOf(hints + (attrs['pubdate'] !== undefined ? ' pubdate' : ''), recent),
            offset,
            aside: frame.aside,
            inMain: frame.inMain,
            article: frame.article,
            itemprop,
          };
          if (value !== null) scan.elements.push(element);
          else {
            frame.capture = {
              text: '',
              done: (text) => {
                const label = LEADING_LABEL.exec(text)?.[0] ?? '';
                // A long text is a paragraph that happens to carry a date class, not a date.
                if (text.length > 80) return;
                const role = /updated|modified|edited/i.test(label) ? 'modified' : /published|posted/i.test(label) ? 'published' : element.role;
                // "Nov 20, 2019 01:41 PM IST | Source: Moneycontrol.com": the date is before the bar.
                const value = text.slice(label.length).split(/\s[|·•]\s/)[0] ?? '';
                scan.elements.push({ ...element, value, role });
              },
            };
          }
        } else if (tag === 'h1') {
          const start = offset;
          frame.capture = {
            text: '',
            done: (text) => scan.h1s.push({ text, start, end: offset, aside: frame.aside, inMain: frame.inMain }),
          };
        }
        if (frame.capture) {
          if (captures.size < MAX_OPEN_CAPTURES) captures.add(frame.capture);
          else frame.capture = null;
        }
      },
      ontext(text) {
        if (inTitle) scan.title += text;
        if (jsonLd !== null) jsonLd += text;
        const frame = stack[stack.length - 1] ?? root;
        if (frame.raw) return;
        offset += text.length;
        recent = (recent + text).replace(/\s+/g, ' ').slice(-80);
        for (const capture of captures) if (capture.text.length < CAPTURE_CHARS) capture.text += text;
      },
      onclosetag() {
        const frame = stack.pop();
        if (!frame || stack.length === 0) {
          stack.push(root);
          return;
        }
        if (frame.tag === 'title') inTitle = false;
        if (frame.tag === 'script' && jsonLd !== null) {
          scan.jsonLd.push(jsonLd);
          jsonLd = null;
        }
        if (frame.capture) {
          captures.delete(frame.capture);
          frame.capture.done(frame.capture.text.replace(/\s+/g, ' ').trim());
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true },
  );
  parser.write(html);
  parser.end();
  // Text captures are recorded when their element closes, after the dated elements inside them: document order.
  scan.elements.sort((a, b) => a.offset - b.offset);
  return scan;
}
