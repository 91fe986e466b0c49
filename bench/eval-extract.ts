/**
 * Extraction quality harness: `npx tsx bench/eval-extract.ts [--verbose] [--trafilatura PYTHON] [--out FILE]`.
 *
 * 1. The scrapinghub article-extraction benchmark (181 news pages) with its own metric, for our extractor and for
 *    @mozilla/readability 0.6 (on linkedom) in the same run: precision, recall, F1 (± bootstrap std) and pages/s.
 * 2. The 130 Mozilla readability test pages: share of pages where our title, byline and excerpt agree with
 *    expected-metadata.json, and shingle-F1 body similarity with expected.html.
 *
 * Data: $NOTARY_SHARED_DIR/eval/extraction (default ../shared beside the repository). Results go to
 * bench/results/extract-<date>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { extractDocument } from '../extract/index.js';
import type { ExtractedDocument } from '../extract/index.js';
import { aggregate, bootstrapStd, pageCounts, textF1, type PageCounts, type Scores } from './eval-extract-metric.js';
import { htmlText } from './eval/html-text.js';

const repoRoot = path.resolve(import.meta.dirname, '..');
const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
const scrapinghubDir = path.join(sharedDir, 'eval/extraction/scrapinghub');
const readabilityDir = path.join(sharedDir, 'eval/extraction/readability-test-pages');
const verbose = process.argv.includes('--verbose');

function argValue(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}
/** A Python with trafilatura installed (e.g. ~/.cache/notary/trafilatura-venv/bin/python): adds it to the same run. */
const trafilaturaPython = argValue('--trafilatura') ?? process.env['NOTARY_TRAFILATURA_PYTHON'];
const outFile = argValue('--out');

interface BenchPage {
  id: string;
  url: string;
  html: string;
  body: string;
}

interface ExtractorRun {
  scores: Scores;
  bootstrap_std: Scores;
  pages_per_second: number;
  ms_per_page: number;
  /** Pages per second of CPU time the extractor used: less sensitive than wall time to other work on a shared machine. */
  pages_per_cpu_second: number;
  failures: number;
  perPage: Array<{ id: string; counts: PageCounts }>;
}

type Extractor = (html: string, url: string) => string;

const ours: Extractor = (html, url) => extractDocument(html, url).text;

const readability: Extractor = (html, url) => {
  const { document } = parseHTML(html);
  // linkedom has no URL on documents parsed from a string; readability resolves links against documentURI.
  Object.defineProperty(document, 'documentURI', { value: url });
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  return article?.textContent ?? '';
};

function loadScrapinghub(): BenchPage[] {
  const truth = JSON.parse(readFileSync(path.join(scrapinghubDir, 'ground-truth.json'), 'utf8')) as Record<
    string,
    { url: string; articleBody: string }
  >;
  return Object.entries(truth)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, { url, articleBody }]) => ({
      id,
      url,
      body: articleBody,
      html: gunzipSync(readFileSync(path.join(scrapinghubDir, 'html', `${id}.html.gz`))).toString('utf8'),
    }));
}

/**
 * trafilatura in one Python process (its start-up is not billed): the pages go in as a JSON file, each page is
 * extracted with trafilatura.extract(html, url=url) and its defaults, after the same five-page warm-up.
 */
const TRAFILATURA_SCRIPT = `
import json, sys, time, trafilatura
pages = json.load(open(sys.argv[1], encoding='utf-8'))
for p in pages[:5]:
    trafilatura.extract(p['html'], url=p['url'])
out, failures = [], 0
start = time.perf_counter()
cpu_start = time.process_time()
for p in pages:
    try:
        out.append(trafilatura.extract(p['html'], url=p['url']) or '')
    except Exception:
        failures += 1
        out.append('')
elapsed = time.perf_counter() - start
cpu = time.process_time() - cpu_start
json.dump({'texts': out, 'seconds': elapsed, 'cpu_seconds': cpu, 'failures': failures, 'version': trafilatura.__version__}, sys.stdout)
`;

function runTrafilatura(pages: readonly BenchPage[], python: string): (ExtractorRun & { version: string }) | null {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'notary-eval-trafilatura-'));
  try {
    const input = path.join(dir, 'pages.json');
    writeFileSync(input, JSON.stringify(pages.map((p) => ({ url: p.url, html: p.html }))));
    const res = spawnSync(python, ['-c', TRAFILATURA_SCRIPT, input], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    if (res.status !== 0) {
      console.error(`trafilatura run failed: ${res.stderr || res.error?.message}`);
      return null;
    }
    const result = JSON.parse(res.stdout) as { texts: string[]; seconds: number; cpu_seconds: number; failures: number; version: string };
    const perPage = pages.map((page, i) => ({ id: page.id, counts: pageCounts(page.body, result.texts[i] ?? '') }));
    const counts = perPage.map((p) => p.counts);
    return {
      scores: aggregate(counts),
      bootstrap_std: bootstrapStd(counts),
      pages_per_second: pages.length / result.seconds,
      ms_per_page: (result.seconds * 1000) / pages.length,
      pages_per_cpu_second: pages.length / result.cpu_seconds,
      failures: result.failures,
      perPage,
      version: result.version,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runExtractor(pages: readonly BenchPage[], extract: Extractor): ExtractorRun {
  // One warm-up pass over a few pages so JIT compilation is not billed to the first pages.
  for (const page of pages.slice(0, 5)) {
    try {
      extract(page.html, page.url);
    } catch {
      // counted below
    }
  }
  const outputs: string[] = [];
  let failures = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  for (const page of pages) {
    try {
      outputs.push(extract(page.html, page.url));
    } catch {
      failures++;
      outputs.push('');
    }
  }
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const perPage = pages.map((page, i) => ({ id: page.id, counts: pageCounts(page.body, outputs[i] ?? '') }));
  const counts = perPage.map((p) => p.counts);
  return {
    scores: aggregate(counts),
    bootstrap_std: bootstrapStd(counts),
    pages_per_second: (pages.length / elapsed) * 1000,
    ms_per_page: elapsed / pages.length,
    pages_per_cpu_second: pages.length / cpuSeconds,
    failures,
    perPage,
  };
}

function normalise(value: string | null | undefined): string {
  return (value ?? '').normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Readability's excerpt: the page description, else the first paragraph of the article. */
function excerptOf(doc: ExtractedDocument): string | null {
  if (doc.description) return doc.description;
  return doc.blocks.find((b) => b.type === 'paragraph')?.text ?? null;
}

interface MetadataRun {
  pages: number;
  title_agreement: number;
  byline_agreement: number;
  excerpt_agreement: number;
  body_similarity_mean: number;
  disagreements: Array<{ page: string; field: string; expected: string | null; got: string | null }>;
}

function runReadabilityPages(): MetadataRun | null {
  if (!existsSync(readabilityDir)) return null;
  const names = readdirSync(readabilityDir)
    .filter((n) => existsSync(path.join(readabilityDir, n, 'source.html')))
    .sort();
  let title = 0;
  let byline = 0;
  let excerpt = 0;
  let similarity = 0;
  const disagreements: MetadataRun['disagreements'] = [];
  for (const name of names) {
    const dir = path.join(readabilityDir, name);
    const expected = JSON.parse(readFileSync(path.join(dir, 'expected-metadata.json'), 'utf8')) as {
      title?: string | null;
      byline?: string | null;
      excerpt?: string | null;
    };
    const doc = extractDocument(readFileSync(path.join(dir, 'source.html'), 'utf8'), 'http://fakehost/test/page.html');
    const checks: Array<[string, string | null | undefined, string | null]> = [
      ['title', expected.title, doc.title],
      ['byline', expected.byline, doc.byline],
      ['excerpt', expected.excerpt, excerptOf(doc)],
    ];
    for (const [field, want, got] of checks) {
      const agree = normalise(want) === normalise(got);
      if (agree) {
        if (field === 'title') title++;
        else if (field === 'byline') byline++;
        else excerpt++;
      } else {
        disagreements.push({ page: name, field, expected: want ?? null, got });
      }
    }
    const expectedBody = existsSync(path.join(dir, 'expected.html'))
      ? htmlText(readFileSync(path.join(dir, 'expected.html'), 'utf8'))
      : '';
    similarity += textF1(expectedBody, doc.text);
  }
  const n = names.length;
  return {
    pages: n,
    title_agreement: title / n,
    byline_agreement: byline / n,
    excerpt_agreement: excerpt / n,
    body_similarity_mean: similarity / n,
    disagreements,
  };
}

function fixed(value: number, digits = 3): string {
  return value.toFixed(digits);
}

function main(): void {
  if (!existsSync(scrapinghubDir)) {
    console.error(`no benchmark data at ${scrapinghubDir}; set NOTARY_SHARED_DIR`);
    process.exitCode = 1;
    return;
  }
  const pages = loadScrapinghub();
  const notary = runExtractor(pages, ours);
  const runs: Record<string, ExtractorRun> = { notary, readability: runExtractor(pages, readability) };
  let trafilaturaVersion: string | null = null;
  if (trafilaturaPython) {
    const run = runTrafilatura(pages, trafilaturaPython);
    if (run) {
      runs['trafilatura'] = run;
      trafilaturaVersion = run.version;
    }
  }
  const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const metadata = runReadabilityPages();

  console.log(`scrapinghub article-extraction-benchmark, ${pages.length} pages`);
  console.log('extractor     precision  recall     F1 (± std)      pages/s   ms/page  pages/CPU-s  failures');
  for (const [name, run] of Object.entries(runs)) {
    console.log(
      `${name.padEnd(13)} ${fixed(run.scores.precision).padEnd(10)} ${fixed(run.scores.recall).padEnd(10)} ` +
        `${fixed(run.scores.f1)} ± ${fixed(run.bootstrap_std.f1)}   ${fixed(run.pages_per_second, 1).padStart(7)}  ` +
        `${fixed(run.ms_per_page, 2).padStart(7)}  ${fixed(run.pages_per_cpu_second, 1).padStart(11)}  ${run.failures}`,
    );
  }
  if (metadata) {
    console.log(`\nreadability test pages (${metadata.pages}): agreement with expected-metadata.json`);
    console.log(
      `title ${fixed(metadata.title_agreement)}  byline ${fixed(metadata.byline_agreement)}  ` +
        `excerpt ${fixed(metadata.excerpt_agreement)}  body similarity (shingle F1) ${fixed(metadata.body_similarity_mean)}`,
    );
  }
  if (verbose) {
    const worst = notary.perPage
      .map((p) => ({ id: p.id, ...p.counts }))
      .sort((a, b) => b.fp + b.fn - (a.fp + a.fn))
      .slice(0, 25);
    console.log('\nworst pages for notary (id, tp, fp, fn):');
    for (const w of worst) console.log(`${w.id.slice(0, 12)} tp=${fixed(w.tp)} fp=${fixed(w.fp)} fn=${fixed(w.fn)}`);
  }

  const date = new Date().toISOString().slice(0, 10);
  const out = {
    date: new Date().toISOString(),
    machine: { os: `${os.type()} ${os.release()}`, arch: os.arch(), cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, node: process.version },
    command: `npx tsx bench/eval-extract.ts${trafilaturaPython ? ' --trafilatura <python>' : ''}`,
    load_average_1_5_15: load,
    versions: { readability: '@mozilla/readability 0.6.0 + linkedom 0.18.14', trafilatura: trafilaturaVersion ? `trafilatura ${trafilaturaVersion} (Python, extract() defaults)` : null },
    scrapinghub: {
      pages: pages.length,
      metric: 'scrapinghub shingle metric (4-token shingles, per-page normalised, mean P/R, F1 of means)',
      extractors: Object.fromEntries(
        Object.entries(runs).map(([name, run]) => [
          name,
          {
            precision: run.scores.precision,
            recall: run.scores.recall,
            f1: run.scores.f1,
            bootstrap_std: run.bootstrap_std,
            pages_per_second: run.pages_per_second,
            ms_per_page: run.ms_per_page,
            pages_per_cpu_second: run.pages_per_cpu_second,
            failures: run.failures,
          },
        ]),
      ),
    },
    readability_test_pages: metadata
      ? {
          pages: metadata.pages,
          agreement_definition: 'NFC, whitespace collapsed, trimmed, case-insensitive equality; null equals empty',
          excerpt_definition: 'our description, else our first paragraph',
          title_agreement: metadata.title_agreement,
          byline_agreement: metadata.byline_agreement,
          excerpt_agreement: metadata.excerpt_agreement,
          body_similarity_mean: metadata.body_similarity_mean,
          disagreements: metadata.disagreements,
        }
      : null,
  };
  const resultsDir = path.join(repoRoot, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const file = outFile ? path.resolve(outFile) : path.join(resultsDir, `extract-${date}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote ${path.relative(repoRoot, file)}`);
}

main();
