import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertRealContent } from './detect.js';
import { extractDocument } from './extract.js';
import { renderText } from './output.js';
import type { ExtractedDocument } from './types.js';

/**
 * The page shapes and false refusals of issue 32 (items 2 and 4), each reproduced by a fixture page written for these
 * tests (test/fixtures/extract-shapes/, the article between <!-- gold:start --> and <!-- gold:end -->). Every test
 * here failed before the fix it names.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../test/fixtures/extract-shapes');

function page(name: string): { html: string; doc: ExtractedDocument } {
  const html = readFileSync(path.join(FIXTURES, name), 'utf8');
  return { html, doc: extractDocument(html, `https://example.org/${name}`) };
}

function verdict(name: string): string {
  const { html, doc } = page(name);
  try {
    assertRealContent(html, doc, false);
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
}

describe('main text in headings and lists', () => {
  it('a checklist written as <h4><li> items is content, not refused', () => {
    expect(verdict('headings-list.html')).toBe('ok');
    expect(page('headings-list.html').doc.text).toContain('Order seed potatoes before the catalogue sells out');
  });

  it('a definition list keeps its terms and definitions', () => {
    expect(verdict('definition-list.html')).toBe('ok');
    const { text } = page('definition-list.html').doc;
    expect(text).toContain('Plain hunt');
    expect(text).toContain('The wooden bar that stops a bell swinging past its balance point.');
  });
});

describe('a page that is nothing but a little text is not refused (Mozilla 005-unescape-html-entities, js-link-replacement, lazy-image-3)', () => {
  it.each([
    ['bare-word.html', 'Noted'],
    ['bare-link-wrapped.html', 'Tuesday open'],
    ['bare-headings.html', 'Second firing'],
  ])('%s is extracted', (name, words) => {
    expect(verdict(name)).toBe('ok');
    expect(page(name).doc.text).toContain(words);
  });

  it('the same few words beside navigation, or in a page of scripts, are still refused', () => {
    const nav = '<nav><a href="/a">Alpha</a> <a href="/b">Beta</a> <a href="/c">Gamma</a></nav>';
    const withNav = `<html><body>${nav}<div>Noted</div></body></html>`;
    const withScript = '<html><body><div>Loading</div><script src="/app.js"></script></body></html>';
    for (const html of [withNav, withScript]) {
      const doc = extractDocument(html, 'https://example.org/');
      expect(() => assertRealContent(html, doc, false)).toThrow();
    }
  });
});

describe('an article whose first block repeats the title', () => {
  const occurrences = (text: string, phrase: string): number => text.split(phrase).length - 1;

  it('keeps the title once in the text output, as markdown does (word_count stays the body)', () => {
    const { doc } = page('title-repeat.html');
    const text = renderText(doc);
    expect(text.startsWith('Repairing a cane chair seat\n\nA sagging cane seat')).toBe(true);
    expect(occurrences(text, 'Repairing a cane chair seat')).toBe(1);
    expect(doc.text).not.toContain('Repairing a cane chair seat');
  });

  it('a lead paragraph that copies the heading is not said twice', () => {
    const html =
      '<html><head><title>Cane chairs</title></head><body><article><h1>Cane chairs</h1><p>Cane chairs</p>' +
      '<p>A sagging cane seat is not a lost cause, and the whole seat can be rewoven in an afternoon.</p></article></body></html>';
    const text = renderText(extractDocument(html, 'https://example.org/cane'));
    expect(occurrences(text, 'Cane chairs')).toBe(1);
    expect(text).toContain('rewoven in an afternoon');
  });
});

describe('an article with a long reader-comment thread: the article wins', () => {
  it.each([
    ['article-comments.html', 'check the time against the radio signal every Saturday'],
    ['article-responses.html', 'waited at that stop every Tuesday for forty years'],
  ])('%s comes back as its article without the thread', (name, sentence) => {
    const { text } = page(name).doc;
    expect(text).toContain(sentence);
    expect(text).not.toMatch(/Reader \d|Neighbour \d|tartan shopping trolley|17 (?:comments|responses)/);
  });
});

describe('a story laid out in tables and a listing of several posts', () => {
  it('the story in a layout table is the content, not its comment box', () => {
    const { text } = page('table-story.html').doc;
    expect(text).toContain('he never opened the notebook again');
    expect(text).not.toContain('Login to comment');
    expect(text).not.toContain('Sea Town People Weather');
  });

  it.each(['blog-listing.html', 'blog-articles.html'])('%s: a blog page whose content is its posts keeps every post, not the calendar and categories', (name) => {
    const { text } = page(name).doc;
    for (const sentence of ['the kettle is never far away', 'twisted along the top like a rope', 'a date and a question mark']) {
      expect(text).toContain(sentence);
    }
    expect(text).not.toMatch(/Kitchen garden|March 2024/);
  });
});

describe('include_comments', () => {
  it('keeps the reader comments after the article when asked', () => {
    for (const name of ['article-comments.html', 'article-responses.html']) {
      const html = readFileSync(path.join(FIXTURES, name), 'utf8');
      const text = extractDocument(html, `https://example.org/${name}`, { includeComments: true }).text;
      expect(text, name).toMatch(/number 17\b/);
      expect(text, name).toMatch(/every Saturday|forty years/);
    }
  });
});

describe('a short article is not a login wall because it asks for a login to comment', () => {
  it('a brief with a header login box and "Please log in to comment" is extracted', () => {
    expect(verdict('brief-login-comment.html')).toBe('ok');
    expect(page('brief-login-comment.html').doc.text).toContain('the computers will not');
  });

  it('a page that asks for a login to read is still refused', () => {
    const html =
      '<html><head><title>Members</title></head><body><form><input type="password" name="p"></form>' +
      '<div class="main"><p>Please log in to continue reading this article about the harbour.</p></div></body></html>';
    expect(() => assertRealContent(html, extractDocument(html, 'https://example.org/m'), false)).toThrow(expect.objectContaining({ code: 'login_required' }));
  });
});

describe('a poem of short lines is content', () => {
  it('nine lines of fewer than eight words each, on a page with scripts, are extracted', () => {
    expect(verdict('poem-lines.html')).toBe('ok');
    expect(page('poem-lines.html').doc.text).toContain('to read what he wrote there.');
  });
});
