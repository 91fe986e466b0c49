/**
 * `npm run eval:extract:languages`: main-content extraction by language (issue 32). For every page of each set,
 * notary extracts as `/v1/extract` does (the article text, or a refusal such as `empty_content`), and the text is
 * scored against the page's gold standard with the scrapinghub shingle metric over words found by the platform's word
 * segmenter (so that Chinese, Japanese and Thai count word by word). Reported per set and language: pages, precision,
 * recall, F1 and refusals by code, with the pages refused although their gold standard has text.
 *
 * Sets: notary's own fixture pages in ten scripts (test/fixtures/extract-scripts) and in the page shapes of issue 32
 * (test/fixtures/extract-shapes, set "shapes"), gold between <!-- gold:start --> and <!-- gold:end --> (a page
 * without markers has no content and should be refused); Mozilla's readability test pages and the scrapinghub
 * benchmark from ../shared (NOTARY_SHARED_DIR), whose language is the page's own declaration or else detected from
 * the gold text. The held-out sets of issue 32 (trafilatura's evaluation data,
 * the html-cleaning-dataset collection) are deliberately not read here.
 *
 * Flags: --sets fixtures,shapes,mozilla,scrapinghub (default all present), --out FILE, --verbose (every page).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { detectLanguage, normaliseLanguageTag, primaryLanguage } from '../../core/language.js';
import { assertRealContent, extractDocument, renderText } from '../../extract/index.js';
import { aggregate, pageCounts, segmentWords, type PageCounts } from '../eval-extract-metric.js';
import { htmlText } from './html-text.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
const FIXTURES = path.join(repoRoot, 'test/fixtures/extract-scripts');
/** Page shapes of issue 32 (headings, tables, listings, comment threads, short pages), gold marked the same way. */
const SHAPES = path.join(repoRoot, 'test/fixtures/extract-shapes');

export interface LanguagePage {
  set: string;
  id: string;
  url: string;
  html: string;
  /** The article's text; empty when the page has none (a refusal is then the right answer). */
  gold: string;
  /** Primary language subtag ("zh", "en"), or "und" when neither declared nor detected. */
  language: string;
}

export interface PageOutcome {
  id: string;
  language: string;
  refused: string | null;
  counts: PageCounts;
}

export interface LanguageRow {
  set: string;
  language: string;
  pages: number;
  precision: number;
  recall: number;
  f1: number;
  refusals: Record<string, number>;
  /** Pages refused although their gold standard has text: false refusals. */
  falsely_refused: string[];
  /** Pages without content that were not refused. */
  falsely_accepted: string[];
}

/** What notary answers for a page in text mode: its text, or the code of the refusal. */
export function extractOrRefuse(html: string, url: string): { text: string; refused: string | null } {
  try {
    const doc = extractDocument(html, url);
    assertRealContent(html, doc, false);
    return { text: renderText(doc), refused: null };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { text: '', refused: typeof code === 'string' ? code : 'error' };
  }
}

/** The gold text of a fixture page: what lies between its gold markers, as a reader reads it. */
export function fixtureGold(html: string): string {
  const start = html.indexOf('<!-- gold:start -->');
  const end = html.indexOf('<!-- gold:end -->');
  if (start < 0 || end < start) return '';
  return htmlText(html.slice(start, end), { spaceInline: false });
}

function languageOf(declared: string | null | undefined, gold: string, html: string): string {
  const tag = normaliseLanguageTag(declared ?? /<html[^>]*\slang=["']?([A-Za-z-]+)/i.exec(html)?.[1] ?? null);
  if (tag) return primaryLanguage(tag);
  const detected = detectLanguage(gold);
  return detected.language && detected.reliable ? primaryLanguage(detected.language) : 'und';
}

function loadFixtureDir(dir: string, set: string): LanguagePage[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.html'))
    .sort()
    .map((name) => {
      const html = readFileSync(path.join(dir, name), 'utf8');
      const gold = fixtureGold(html);
      return { set, id: name, url: `https://example.org/${name}`, html, gold, language: languageOf(null, gold, html) };
    });
}

const loadFixtures = (): LanguagePage[] => loadFixtureDir(FIXTURES, 'fixtures');
const loadShapes = (): LanguagePage[] => loadFixtureDir(SHAPES, 'shapes');

function loadMozilla(): LanguagePage[] {
  const dir = path.join(sharedDir, 'eval/extraction/readability-test-pages');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => existsSync(path.join(dir, name, 'source.html')) && existsSync(path.join(dir, name, 'expected.html')))
    .sort()
    .map((name) => {
      const html = readFileSync(path.join(dir, name, 'source.html'), 'utf8');
      const gold = htmlText(readFileSync(path.join(dir, name, 'expected.html'), 'utf8'), { spaceInline: false });
      const metadata = JSON.parse(readFileSync(path.join(dir, name, 'expected-metadata.json'), 'utf8')) as { lang?: string | null };
      return { set: 'mozilla', id: name, url: `http://fakehost/test/${name}`, html, gold, language: languageOf(metadata.lang, gold, html) };
    });
}

function loadScrapinghub(): LanguagePage[] {
  const dir = path.join(sharedDir, 'eval/extraction/scrapinghub');
  if (!existsSync(dir)) return [];
  const truth = JSON.parse(readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<string, { url: string; articleBody: string }>;
  return Object.entries(truth)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, { url, articleBody }]) => {
      const html = gunzipSync(readFileSync(path.join(dir, 'html', `${id}.html.gz`))).toString('utf8');
      return { set: 'scrapinghub', id, url, html, gold: articleBody, language: languageOf(null, articleBody, html) };
    });
}

export function scorePages(pages: readonly LanguagePage[]): PageOutcome[] {
  return pages.map((page) => {
    const { text, refused } = extractOrRefuse(page.html, page.url);
    return { id: page.id, language: page.language, refused, counts: pageCounts(page.gold, text, segmentWords) };
  });
}

/** One row per set and language, plus an "all" row per set. */
export function languageRows(set: string, pages: readonly LanguagePage[], outcomes: readonly PageOutcome[]): LanguageRow[] {
  const byLanguage = new Map<string, number[]>();
  outcomes.forEach((o, i) => byLanguage.set(o.language, [...(byLanguage.get(o.language) ?? []), i]));
  const row = (language: string, indexes: readonly number[]): LanguageRow => {
    const chosen = indexes.map((i) => ({ page: pages[i] as LanguagePage, outcome: outcomes[i] as PageOutcome }));
    // A page without content that was refused is right, and scores as a perfect page.
    const counts = chosen.map(({ page, outcome }) => (page.gold === '' && outcome.refused ? { tp: 1, fp: 0, fn: 0 } : outcome.counts));
    const refusals: Record<string, number> = {};
    for (const { outcome } of chosen) if (outcome.refused) refusals[outcome.refused] = (refusals[outcome.refused] ?? 0) + 1;
    return {
      set,
      language,
      pages: chosen.length,
      ...aggregate(counts),
      refusals,
      falsely_refused: chosen.filter(({ page, outcome }) => outcome.refused && page.gold !== '').map(({ page }) => page.id),
      falsely_accepted: chosen.filter(({ page, outcome }) => !outcome.refused && page.gold === '').map(({ page }) => page.id),
    };
  };
  const languages = [...byLanguage.keys()].sort();
  return [...languages.map((language) => row(language, byLanguage.get(language) ?? [])), row('all', outcomes.map((_, i) => i))];
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function main(): void {
  const loaders: Record<string, () => LanguagePage[]> = { fixtures: loadFixtures, shapes: loadShapes, mozilla: loadMozilla, scrapinghub: loadScrapinghub };
  const wanted = (argValue('--sets') ?? Object.keys(loaders).join(',')).split(',').map((s) => s.trim());
  const unknown = wanted.filter((name) => !(name in loaders));
  if (unknown.length > 0) throw new Error(`--sets: unknown set ${unknown.join(', ')} (known: ${Object.keys(loaders).join(', ')})`);
  const loadBefore = os.loadavg();
  const rows: LanguageRow[] = [];
  for (const set of wanted) {
    const pages = (loaders[set] as () => LanguagePage[])();
    if (pages.length === 0) {
      console.log(`${set}: no pages (is ${sharedDir} there? NOTARY_SHARED_DIR points elsewhere)`);
      continue;
    }
    const outcomes = scorePages(pages);
    if (process.argv.includes('--verbose')) for (const o of outcomes) console.log(`${set} ${o.id} ${o.language} ${o.refused ?? ''} tp=${o.counts.tp.toFixed(2)}`);
    rows.push(...languageRows(set, pages, outcomes));
  }
  console.log('set          language  pages  precision  recall  F1     refusals (false refusals)');
  for (const r of rows) {
    const refusals = Object.entries(r.refusals).map(([code, n]) => `${code} ${n}`).join(', ');
    console.log(
      `${r.set.padEnd(12)} ${r.language.padEnd(9)} ${String(r.pages).padStart(5)}  ${r.precision.toFixed(3).padStart(9)}  ${r.recall.toFixed(3).padStart(6)}  ${r.f1.toFixed(3)}  ${refusals || '-'}${r.falsely_refused.length ? ` (${r.falsely_refused.join(' ')})` : ''}${r.falsely_accepted.length ? `; not refused: ${r.falsely_accepted.join(' ')}` : ''}`,
    );
  }
  const date = new Date().toISOString();
  const out = argValue('--out') ?? path.join(repoRoot, 'bench/results', `eval-extract-languages-${date.slice(0, 10)}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  const machine = { os: `${os.type()} ${os.release()}`, arch: os.arch(), cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, node: process.version };
  writeFileSync(out, JSON.stringify({ date, machine, load_before: loadBefore, load_after: os.loadavg(), metric: 'scrapinghub shingle F1 (4 words) over Intl.Segmenter words', rows }, null, 2) + '\n');
  console.log(`\nwrote ${path.relative(repoRoot, out)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
