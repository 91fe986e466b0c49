import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertRealContent, isJsShell } from './detect.js';
import { extractDocument } from './extract.js';
import { pickExcerpt } from './output.js';
import type { ExtractedDocument } from './types.js';

/**
 * The kinds of page issue 13 names, each reproduced by a fixture page written for these tests
 * (test/fixtures/pages/, see its README). Every test here failed before the fix it names.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../test/fixtures/pages');

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

describe('walls are refused only when the main content is the wall', () => {
  it.each([
    ['blog-recaptcha-comments.html', 'a new leaf is unfurling at the top'],
    ['news-hcaptcha-newsletter.html', 'evening sailings would also resume'],
    ['deal-page-recaptcha.html', 'works on induction and in the oven'],
    ['article-cf-challenge-script.html', 'lighter walls rather than lighter streets'],
    ['article-login-modal.html', 'the café will serve lunch'],
  ])('%s has content beside its widget and is extracted', (name, sentence) => {
    expect(verdict(name)).toBe('ok');
    expect(page(name).doc.text).toContain(sentence);
  });

  it.each([
    ['wall-cloudflare-managed.html', 'captcha_detected'],
    ['wall-google-unusual-traffic.html', 'captcha_detected'],
    ['wall-hcaptcha-attention.html', 'captcha_detected'],
    ['wall-datadome.html', 'captcha_detected'],
    ['wall-login.html', 'login_required'],
  ])('%s is still refused as %s', (name, code) => {
    expect(verdict(name)).toBe(code);
  });

  it('a server-rendered app with its text in place is not a JavaScript shell; an empty mount point is', () => {
    const ssr = page('ssr-app-short-page.html');
    expect(isJsShell(ssr.html, ssr.doc)).toBe(false);
    const shell = '<!doctype html><html><head><title>App</title><script src="/main.js"></script></head><body><div id="root"></div></body></html>';
    expect(isJsShell(shell, extractDocument(shell, 'https://example.org/'))).toBe(true);
  });
});

describe('main text that was lost or polluted', () => {
  it('removes soft hyphens, zero-width spaces, word joiners and BOMs inside words (text and title)', () => {
    const { doc } = page('invisible-characters.html');
    expect(doc.title).toBe('Die Donaudampfschifffahrt fährt wieder nach Fahrplan');
    for (const word of ['Ausflugsschiffe', 'Wasserstand', 'Anlegestellen', 'Seniorinnen', 'Abendfahrten', 'timetable', 'information', 'questions']) {
      expect(doc.text).toContain(word);
    }
    expect(doc.text).not.toMatch(/[\u00ad\u200b\u2060\ufeff]/);
    // The same characters written raw rather than as character references.
    const raw = extractDocument(
      `<html><head><title>Fahr\u00adplan</title></head><body><article><p>${'Die Ausflugs\u00adschiffe fahren wieder.\u200b '.repeat(20)}Schluss\u2060wort.</p></article></body></html>`,
      'https://example.org/raw',
    );
    expect(raw.title).toBe('Fahrplan');
    expect(raw.text).toContain('Die Ausflugsschiffe fahren wieder.');
    expect(raw.text).toContain('Schlusswort.');
    expect(raw.text).not.toMatch(/[\u00ad\u200b\u2060\ufeff]/);
  });

  it('reads a page whose text ships only inside <noscript> (a Blogger dynamic view)', () => {
    const { html, doc } = page('blogger-noscript.html');
    expect(doc.text).toContain('The wrens have come back to the mill race.');
    expect(doc.text).toContain('cocks its tail and looks straight at you');
    expect(isJsShell(html, doc)).toBe(false);
  });

  it('keeps accordion and tab panels (role="tablist", hidden panels)', () => {
    const { doc } = page('accordion-tabs.html');
    for (const sentence of ['Garden waste only', 'report it online before noon', 'a 360 litre general waste bin', 'collected on Mondays', 'collected on Thursdays']) {
      expect(doc.text).toContain(sentence);
    }
    expect(doc.text).toContain('What goes in the green bin?');
  });

  it("keeps a Drupal body field whose class says field-label-hidden", () => {
    const { doc } = page('drupal-field-label-hidden.html');
    expect(doc.text).toContain('The water meadows below Ashby mill were flooded every winter');
    expect(doc.text).toContain('Monitoring will continue for five years.');
  });

  it('keeps sections whose class holds "ads" only as part of a longer name, and drops the ad slots', () => {
    const { doc } = page('article-chunks-has-ads.html');
    for (const sentence of ['Sleeper trains are returning', 'The longest of the new routes', 'Rail campaigners welcomed', 'For now the mood']) {
      expect(doc.text).toContain(sentence);
    }
    expect(doc.text).not.toContain('Advertisement');
  });

  it('reads an article inside <aside> and a whole page inside <header>', () => {
    const aside = page('article-inside-aside.html').doc;
    expect(aside.text).toContain('The tramway was built in the eighteen-twenties');
    expect(aside.text).toContain('make a circuit back to the basin');
    expect(aside.text).not.toContain('Reservoir circuit');
    const header = page('page-inside-header.html').doc;
    expect(header.text).toContain('What matters is aperture');
    expect(header.text).toContain('before you spend anything');
    expect(header.text).not.toContain('Events');
  });

  it('keeps the posts of a forum thread and the answers of a Q&A page that carry "comment" classes', () => {
    const forum = page('forum-thread.html').doc;
    for (const post of ['smell strongly of nail varnish remover', 'Not ruined, just hungry.', 'Agree with crumbshot.', 'Update: two feeds a day']) {
      expect(forum.text).toContain(post);
    }
    const qa = page('qa-answers-comments.html').doc;
    for (const answer of ['Almost certainly a worn cog.', 'Check the lockring too.', 'rear derailleur limit screw']) {
      expect(qa.text).toContain(answer);
    }
    expect(qa.text).not.toContain('How often should I replace my chain?');
  });

  it('still leaves the comments of an article with real content out (guard)', () => {
    const { doc } = page('drupal-body-field-comments.html');
    expect(doc.text).toContain('the taste comes from geosmin');
    expect(doc.text).not.toContain('nearly sent it back');
  });

  it('takes the article, not the related-article teasers inside it (Drupal article.node-article)', () => {
    const { doc } = page('drupal-related-teasers.html');
    expect(doc.text).toContain('the first complete map of its hedgerows');
    expect(doc.text).toContain('which rarely colonise new hedges');
    for (const teaser of ['Dormice return', 'hazel dormice', 'Hedge-laying weekend', 'swift calls']) expect(doc.text).not.toContain(teaser);
  });

  it('drops in-article boilerplate: intro blurb, download-as-PDF box, card row, tip box, author box', () => {
    const { doc } = page('boilerplate-in-article.html');
    expect(doc.text).toContain('air has collected inside it');
    expect(doc.text).toContain('a visit from a heating engineer');
    for (const junk of ['Welcome to Home Energy Hub', 'Download this guide', 'Setting thermostatic radiator valves', 'Balancing your radiators', 'Got a story', 'About the writer', 'Sam Patel']) {
      expect(doc.text).not.toContain(junk);
    }
  });
});

describe('navigation is not content', () => {
  it('a page with only a navigation bar is empty_content', () => {
    expect(verdict('nav-only.html')).toBe('empty_content');
  });

  it('the excerpt does not start with a language switcher, and the switcher is not in the text', async () => {
    const { doc } = page('available-languages.html');
    expect(doc.text).not.toContain('Available Languages');
    expect(await pickExcerpt(doc)).toMatch(/^This document covers stopping and restarting the server/);
  });
});
