/**
 * Publication-date report (issue 29 item 2): `npm run eval:dates [-- --verbose] [--out FILE]`.
 *
 * Runs detectPageDates over the extraction evaluation pages in $NOTARY_SHARED_DIR/eval/extraction (default
 * ../shared beside the repository), as the crawler would with no response headers and no sitemap:
 * 1. The 130 Mozilla readability test pages: their expected-metadata.json has `publishedTime` (what Readability
 *    reads from JSON-LD and meta tags) on 33 pages; agreement with it, and what we find on the other 97.
 * 2. The 181 scrapinghub news pages: their ground truth has only url and articleBody, no date. What is checkable: the
 *    date in the URL (/2019/05/17/) against the date we take from the page itself, and whether the independent
 *    sources on one page (JSON-LD, meta, <time>, URL) agree with the one we chose.
 * Agreement: the same instant when both sides have a time, else the same day (in UTC or as written); "within a
 * day" also accepts times less than 24 h apart, and a time that falls on the day in some zone (UTC-12 to +14). Results go to
 * bench/results/eval-dates-<date>.json.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { detectPageDates, parseDateValue, type DateCandidate, type DateFinding, type DateSource, type PageDates } from '../extract/index.js';

const repoRoot = path.resolve(import.meta.dirname, '..');
const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
const scrapinghubDir = path.join(sharedDir, 'eval/extraction/scrapinghub');
const readabilityDir = path.join(sharedDir, 'eval/extraction/readability-test-pages');
const verbose = process.argv.includes('--verbose');
const outAt = process.argv.indexOf('--out');
const outFile = outAt >= 0 ? process.argv[outAt + 1] : undefined;
const now = Date.now();

interface Page {
  id: string;
  url: string;
  html: string;
  truth: string | null;
}

type Agreement = 'same' | 'within_day' | 'differ';

interface Dated {
  value: string;
  precision: string;
  raw?: string;
}

const HOUR = 3600 * 1000;

/** The calendar day a value was written in (its own zone), when it starts with YYYY-MM-DD. */
function writtenDay(d: Dated): string | null {
  return /^\d{4}-\d{2}-\d{2}/.exec(d.raw ?? '')?.[0] ?? null;
}

/**
 * Two times: the same instant, or less than 24 h apart. A day and a time: the same day in UTC or as the time was
 * written; within a day when the time falls on that day in some zone (UTC-12 to UTC+14).
 */
function agreement(a: Dated, b: Dated): Agreement {
  if (a.precision === 'time' && b.precision === 'time') {
    if (a.value === b.value) return 'same';
    return Math.abs(Date.parse(a.value) - Date.parse(b.value)) < 24 * HOUR ? 'within_day' : 'differ';
  }
  const [day, other] = a.precision === 'day' ? [a, b] : [b, a];
  if (day.value === other.value.slice(0, 10) || day.value === writtenDay(other)) return 'same';
  const start = Date.parse(day.value);
  const t = Date.parse(other.value);
  return t >= start - 14 * HOUR && t < start + 36 * HOUR ? 'within_day' : 'differ';
}

function loadReadability(): Page[] {
  if (!existsSync(readabilityDir)) return [];
  return readdirSync(readabilityDir)
    .filter((n) => existsSync(path.join(readabilityDir, n, 'source.html')))
    .sort()
    .map((id) => {
      const meta = JSON.parse(readFileSync(path.join(readabilityDir, id, 'expected-metadata.json'), 'utf8')) as { publishedTime?: string | null };
      return { id, url: 'http://fakehost/test/page.html', html: readFileSync(path.join(readabilityDir, id, 'source.html'), 'utf8'), truth: meta.publishedTime ?? null };
    });
}

function loadScrapinghub(): Page[] {
  const truth = JSON.parse(readFileSync(path.join(scrapinghubDir, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
  return Object.entries(truth)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, { url }]) => ({ id, url, truth: null, html: gunzipSync(readFileSync(path.join(scrapinghubDir, 'html', `${id}.html.gz`))).toString('utf8') }));
}

function countBy<T extends string>(values: readonly (T | null)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v ?? 'none'] = (out[v ?? 'none'] ?? 0) + 1;
  return out;
}

function tally(values: readonly Agreement[]): { compared: number; same: number; within_day: number; differ: number; agree_share: number; within_day_share: number } {
  const same = values.filter((v) => v === 'same').length;
  const within = values.filter((v) => v === 'within_day').length;
  const n = values.length;
  return { compared: n, same, within_day: within, differ: n - same - within, agree_share: n ? same / n : 0, within_day_share: n ? (same + within) / n : 0 };
}

function run(pages: readonly Page[]): { results: PageDates[]; msPerPage: number; cpuMsPerPage: number } {
  // A warm-up pass so JIT compilation is not billed to the first pages.
  for (const p of pages.slice(0, 5)) detectPageDates({ html: p.html, url: p.url, now });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const results = pages.map((p) => detectPageDates({ html: p.html, url: p.url, now }));
  const used = process.cpuUsage(cpu);
  const n = Math.max(pages.length, 1);
  return { results, msPerPage: (performance.now() - started) / n, cpuMsPerPage: (used.user + used.system) / 1000 / n };
}

function firstOf(candidates: readonly DateCandidate[], source: DateSource): DateCandidate | undefined {
  return candidates.find((c) => c.kind === 'published' && c.source === source);
}

function summarise(name: string, pages: readonly Page[], timed: ReturnType<typeof run>): Record<string, unknown> {
  const { results, msPerPage, cpuMsPerPage } = timed;
  const published = results.map((r) => r.publishedAt);
  const out: Record<string, unknown> = {
    pages: pages.length,
    ms_per_page: msPerPage,
    cpu_ms_per_page: cpuMsPerPage,
    published_found: published.filter(Boolean).length,
    modified_found: results.filter((r) => r.modifiedAt).length,
    published_source: countBy(published.map((d) => d?.source ?? null)),
    modified_source: countBy(results.map((r) => r.modifiedAt?.source ?? null)),
    published_precision: countBy(published.map((d) => d?.precision ?? null)),
  };
  const lines: string[] = [];
  // Ground truth (Mozilla): agreement where the truth has a date.
  const withTruth = pages.map((p, i) => ({ p, got: published[i] ?? null })).filter((x) => x.p.truth !== null);
  if (withTruth.length > 0) {
    const verdicts: Agreement[] = [];
    const misses: string[] = [];
    const disagreements: Array<{ page: string; expected: string; got: DateFinding | null }> = [];
    for (const { p, got } of withTruth) {
      const truth = parseDateValue(p.truth, now);
      if (!truth) continue;
      if (!got) {
        misses.push(p.id);
        disagreements.push({ page: p.id, expected: p.truth ?? '', got: null });
        continue;
      }
      const v = agreement(got, { value: truth.iso, precision: truth.precision, raw: p.truth ?? '' });
      verdicts.push(v);
      if (v !== 'same') disagreements.push({ page: p.id, expected: p.truth ?? '', got });
    }
    const t = tally(verdicts);
    out['ground_truth'] = {
      field: 'expected-metadata.json publishedTime',
      pages_with_truth: withTruth.length,
      found: withTruth.length - misses.length,
      ...t,
      agree_share_of_truth: t.same / withTruth.length,
      disagreements,
    };
    out['dated_without_truth'] = countBy(pages.map((p, i) => (p.truth === null ? published[i]?.source ?? null : null)).filter((s) => s !== null));
    lines.push(`  ground truth publishedTime on ${withTruth.length} pages: found ${withTruth.length - misses.length}, same ${t.same}, within a day ${t.same + t.within_day}, differ ${t.differ}`);
  }
  // URL date against the page's own date (JSON-LD, meta, <time>): independent evidence.
  const urlChecks: Agreement[] = [];
  const urlDisagreements: Array<{ page: string; url: string; page_date: DateFinding }> = [];
  const crossChecks: Record<string, Agreement[]> = {};
  results.forEach((r, i) => {
    const chosen = r.publishedAt;
    if (!chosen) return;
    const urlDay = firstOf(r.candidates, 'url');
    if (urlDay && chosen.source !== 'url') {
      const v = agreement(chosen, urlDay);
      urlChecks.push(v);
      if (v === 'differ') urlDisagreements.push({ page: pages[i]?.id ?? '', url: pages[i]?.url ?? '', page_date: chosen });
    }
    for (const source of ['json_ld', 'meta', 'time_element', 'url'] as const) {
      const other = firstOf(r.candidates, source);
      if (!other || source === chosen.source) continue;
      (crossChecks[`${chosen.source} vs ${source}`] ??= []).push(agreement(chosen, other));
    }
  });
  if (urlChecks.length > 0 || name === 'scrapinghub') {
    const t = tally(urlChecks);
    out['url_date_check'] = { pages_with_url_date_and_page_date: t.compared, ...t, disagreements: urlDisagreements };
    lines.push(`  URL date vs page date on ${t.compared} pages: same day ${t.same}, within a day ${t.same + t.within_day}, differ ${t.differ}`);
  }
  out['cross_source_agreement'] = Object.fromEntries(Object.entries(crossChecks).map(([k, v]) => [k, tally(v)]));
  for (const [k, v] of Object.entries(crossChecks)) {
    const t = tally(v);
    lines.push(`  chosen ${k}: ${t.compared} pages, same ${t.same}, within a day ${t.same + t.within_day}`);
  }
  console.log(`\n${name}: ${pages.length} pages, published_at on ${out['published_found']}, modified_at on ${out['modified_found']} (${msPerPage.toFixed(2)} ms/page, ${cpuMsPerPage.toFixed(2)} ms CPU/page)`);
  console.log(`  published source: ${JSON.stringify(out['published_source'])}`);
  console.log(`  modified source:  ${JSON.stringify(out['modified_source'])}`);
  for (const line of lines) console.log(line);
  if (verbose) {
    pages.forEach((p, i) => console.log(`  ${p.id.slice(0, 16).padEnd(16)} ${published[i]?.value ?? '-'} ${published[i]?.source ?? ''} ${published[i]?.detail ?? ''} truth=${p.truth ?? '-'} ${p.url}`));
  }
  return out;
}

function main(): void {
  if (!existsSync(scrapinghubDir)) {
    console.error(`no evaluation pages at ${scrapinghubDir}; set NOTARY_SHARED_DIR`);
    process.exitCode = 1;
    return;
  }
  const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const mozilla = loadReadability();
  const scrapinghub = loadScrapinghub();
  const m = run(mozilla);
  const s = run(scrapinghub);
  const out = {
    date: new Date().toISOString(),
    machine: { os: `${os.type()} ${os.release()}`, arch: os.arch(), cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, node: process.version },
    command: 'npm run eval:dates',
    load_average_1_5_15: load,
    inputs: 'HTML and URL only: these sets have no response headers and no sitemaps, so last_modified_header and sitemap_lastmod never occur',
    agreement_definition: 'same: equal instant when both have a time, else equal day (UTC or as written); within_day: also times < 24 h apart, or a time on that day in some zone UTC-12..+14',
    mozilla_readability_test_pages: summarise('mozilla readability test pages', mozilla, m),
    scrapinghub: summarise('scrapinghub', scrapinghub, s),
  };
  const resultsDir = path.join(repoRoot, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const file = outFile ? path.resolve(outFile) : path.join(resultsDir, `eval-dates-${out.date.slice(0, 10)}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote ${path.relative(repoRoot, file)}`);
}

main();
