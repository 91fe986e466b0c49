import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractDocument } from './extract.js';
import { fileAvailable } from '../testkit/components.js';

/** A paragraph of article prose, numbered so that each one is distinct. */
function prose(n: number): string {
  return (
    `Paragraph ${n} of the story: the council met on Tuesday, heard from residents about the new bridge, ` +
    `and agreed, after a long debate, to publish the engineering report before the vote in the spring.`
  );
}

function paragraphs(from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => `<p>${prose(from + i)}</p>`).join('\n');
}

function html(body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><title>Bridge vote | Example News</title></head><body>${body}</body></html>`;
}

describe('main content: furniture inside the article container', () => {
  it('drops hinted related-story, tag, gallery and promo boxes that the page-level pass keeps', () => {
    const doc = extractDocument(
      html(`<article class="story">
        <h1>Bridge vote</h1>
        ${paragraphs(1, 3)}
        <div class="post-gallery"><p>The old bridge at dusk, seen from the river bank, in a picture from our archive galleryword.</p></div>
        ${paragraphs(4, 3)}
        <div class="story-tags"><p>Filed under: bridges, council, transport, river crossings, local politics tagword.</p></div>
        <div class="entry-promo-box"><p>Try our digital edition free for a month and read every story promoword.</p></div>
        <div class="article-related-content"><h3>More on this</h3><p>Residents protest the toll plan, and the mayor answers them relatedword.</p></div>
      </article>`),
      'https://news.example/bridge',
    );
    for (let n = 1; n <= 6; n++) expect(doc.text).toContain(`Paragraph ${n} of the story`);
    expect(doc.text).not.toMatch(/galleryword|tagword|promoword|relatedword/);
  });

  it('keeps an embedded post (a blockquote) whatever its wrapper is called', () => {
    const doc = extractDocument(
      html(`<article>${paragraphs(1, 4)}
        <div class="article-widget embed-tweet"><blockquote class="twitter-tweet"><p>We are delighted to confirm the bridge reopens on Monday tweetword.</p>
        &mdash; City Council (@council)</blockquote></div>
        ${paragraphs(5, 2)}</article>`),
      'https://news.example/bridge',
    );
    expect(doc.text).toContain('tweetword');
  });

  it('does not treat section anchors named after their heading as furniture (DocBook ids)', () => {
    const doc = extractDocument(
      html(`<div class="chapter">
        <div class="sect2" id="RUNTIME-CONFIG-REPLICATION-SUBSCRIBER"><h3>Subscribers</h3><p>These settings control the behaviour of a logical replication subscriber subscriberword.</p></div>
        ${paragraphs(1, 6)}
        <div class="sect2" id="logical-replication-subscription-slot"><h3>Slots</h3><p>Each subscription receives changes from a replication slot on the publisher slotword.</p></div>
      </div>`),
      'https://docs.example/replication',
    );
    expect(doc.text).toContain('subscriberword');
    expect(doc.text).toContain('slotword');
  });
});

describe('main content: choosing the container', () => {
  it('prefers the article over a longer list of teaser <article>s beside it', () => {
    const teasers = Array.from(
      { length: 6 },
      (_, i) => `<article class="post teaser"><h2><a href="/t${i}">Teaser ${i}</a></h2><p>${prose(100 + i)} teaserword</p></article>`,
    ).join('\n');
    const doc = extractDocument(
      html(`<div id="primary">
        <article class="post entry"><h1>Bridge vote</h1>${paragraphs(1, 2)}</article>
        <article class="post list"><h3>You may also like</h3>${teasers}</article>
      </div>`),
      'https://news.example/bridge',
    );
    expect(doc.text).toContain('Paragraph 1 of the story');
    expect(doc.text).toContain('Paragraph 2 of the story');
    expect(doc.text).not.toContain('teaserword');
  });

  it('finds article text written straight into a div beside blocks, without <p> elements', () => {
    const archive = Array.from({ length: 20 }, (_, i) => `<li><a href="/archive/${i}">Month ${i} (3)</a></li>`).join('');
    const loose = Array.from({ length: 4 }, (_, i) => `${prose(i + 1)}<br><br>`).join('\n');
    const doc = extractDocument(
      html(`<div class="row">
        <div class="col-3"><ul>${archive}</ul></div>
        <div class="col-9"><p class="title">Bridge vote</p><small>05/10/2018 - Posted by the newsroom</small><br>${loose}</div>
      </div>
      <div class="bottom">Example City Hall - Main Street 1 - 89259-565 - Phone 2106-8000 footerword</div>`),
      'https://news.example/bridge',
    );
    for (let n = 1; n <= 4; n++) expect(doc.text).toContain(`Paragraph ${n} of the story`);
    expect(doc.text).not.toContain('footerword');
    expect(doc.text).not.toContain('Month 3');
  });

  it('keeps the prose of a mostly-links wrapper and drops its link list', () => {
    const popular = Array.from(
      { length: 12 },
      (_, i) => `<li><span>${i + 1}</span><h5><a href="/p/${i}">Most read headline number ${i + 1} about something else entirely</a></h5></li>`,
    ).join('');
    const doc = extractDocument(
      html(`<article><div class="article-body">${paragraphs(1, 3)}<div class="rail"><ul>${popular}</ul></div></div></article>`),
      'https://news.example/bridge',
    );
    for (let n = 1; n <= 3; n++) expect(doc.text).toContain(`Paragraph ${n} of the story`);
    expect(doc.text).not.toContain('Most read headline');
  });
});

const pgDocs = process.env['NOTARY_PG_DOC_DIR'] ?? '/usr/share/doc/postgresql-doc-15/html';

describe.runIf(fileAvailable('the PostgreSQL documentation (postgresql-doc-15)', path.join(pgDocs, 'admin.html')))('main content: documentation part pages', () => {
  it("keeps a part page's intro and its own table of contents, not the navigation", () => {
    const file = path.join(pgDocs, 'admin.html');
    const doc = extractDocument(readFileSync(file, 'utf8'), `file://${file}`);
    expect(doc.text).toContain('This part covers topics that are of interest to a PostgreSQL database administrator');
    expect(doc.text).toContain('Installation from Binaries');
    expect(doc.text).toContain('Server Setup and Operation');
    expect(doc.text).not.toMatch(/\bPrev\b|\bNext\b/);
  });
});

describe('main content: a reference page of sibling sections', () => {
  /** One configuration parameter as DocBook writes it: the name in a <dt>, its description in a <dd>. */
  function parameter(name: string, sentences: number): string {
    const text = Array.from({ length: sentences }, (_, i) => `Sentence ${i + 1} about ${name}, which sets how often the server writes, rotates, or keeps its files.`).join(' ');
    return `<dt id="guc-${name}"><span class="term"><code class="varname">${name}</code> (<code class="type">integer</code>)</span></dt><dd><p>${text}</p><p>${text}</p></dd>`;
  }

  function section(id: string, heading: string, names: readonly string[], sentences: number): string {
    return `<div class="sect2" id="${id}"><div class="titlepage"><h3 class="title"><a id="${id}-anchor"></a>${heading}</h3></div>
      <p>This section lists the settings that control ${heading.toLowerCase()}.</p>
      <div class="variablelist"><dl class="variablelist">${names.map((n) => parameter(n, sentences)).join('')}</dl></div></div>`;
  }

  it('keeps every section of the chapter, not only the best-scoring one', () => {
    const doc = extractDocument(
      html(`<div class="navheader"><a href="a.html">Prev</a> <a href="b.html">Up</a> <a href="c.html">Next</a></div>
        <div class="sect1" id="logging"><div class="titlepage"><h2 class="title">Error Reporting and Logging</h2></div>
          ${section('where', 'Where to Log', ['log_destination', 'log_rotation_age', 'log_rotation_size', 'log_truncate'], 3)}
          ${section('when', 'When to Log', ['log_min_messages', 'log_min_duration', 'log_min_error'], 3)}
          ${section('what', 'What to Log', Array.from({ length: 12 }, (_, i) => (i === 0 ? 'application_name' : i === 11 ? 'log_statement' : `log_setting_${i}`)), 4)}
        </div>
        <div class="navfooter"><a href="a.html">Prev</a> <a href="index.html">Home</a> <a href="c.html">Next</a></div>`),
      'https://docs.example/runtime-config-logging.html',
    );
    for (const name of ['log_destination', 'log_rotation_age', 'log_min_messages', 'application_name', 'log_statement']) expect(doc.text).toContain(name);
    expect(doc.text).toContain('Where to Log');
  });

  it('does not widen an article into the other posts beside it', () => {
    const teaser = (n: number): string =>
      `<article class="post"><h3><a href="https://blog.example/post-${n}">Post ${n}</a></h3><p>${Array.from({ length: 4 }, (_, i) => `Teaser ${n}.${i}: a long excerpt of another post, with words enough to look like prose, teaserword.`).join(' ')}</p></article>`;
    const doc = extractDocument(
      html(`<div class="wrap"><article class="post"><h1>Bridge vote</h1>${paragraphs(1, 3)}</article>
        <h3 class="relatedposts">You may also like</h3>${teaser(1)}${teaser(2)}${teaser(3)}${teaser(4)}</div>`),
      'https://blog.example/bridge',
    );
    for (let n = 1; n <= 3; n++) expect(doc.text).toContain(`Paragraph ${n} of the story`);
    expect(doc.text).not.toContain('teaserword');
  });
});
