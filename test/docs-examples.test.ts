import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runChild, runCli, startServer, type RunningServer } from '../testkit/cli.js';
import { available, fileAvailable } from '../testkit/components.js';
import { COMMAND_LANGS, GENERATED_DOCS, allDocBlocks, commandLines, docBlocks, docFiles, shownHeaders, type DocBlock } from './support/doc-examples.js';
import { sharedModels, startFakeHub, writePins, type FakeHub } from '../testkit/fake-hub.js';
import { biEncoderDir } from '../testkit/models.js';
import { pgDocsDir } from '../testkit/pgdocs.js';
import { freePort } from '../testkit/postgres.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';

/**
 * Every command and program shown in README.md and docs/ is covered by a test, so the docs cannot drift from the
 * code. How each block is covered is written above it (test/support/doc-examples.ts); the `run` blocks are run here,
 * in order, in one shell session per page against a real `notary serve`, with three substitutions a reader makes
 * too: the server's address for localhost:8080 (the server runs without models; a model hub on 127.0.0.1
 * serves ../shared's models under a test pin manifest for `notary models pull`), a local copy of a few pages of the PostgreSQL documentation (Debian's,
 * with a page of links to them) for https://www.postgresql.org/docs/current/, and `npx notary` / `npx tsx` resolved to this checkout.
 */

const DOCS_URL = 'https://www.postgresql.org/docs/current/';
const PGDOCS_PAGES = ['sql-vacuum.html', 'routine-vacuuming.html', 'sql-analyze.html', 'sql-createindex.html', 'indexes.html', 'mvcc.html', 'sql-select.html'];

const blocks = allDocBlocks();
const commandBlocks = blocks.filter((b) => COMMAND_LANGS.has(b.lang) && !GENERATED_DOCS.has(b.file));
const where = (b: DocBlock) => `${b.file}:${b.line}`;

describe('docs examples: every block says how a test covers it', () => {
  it('each command or program block has a marker', () => {
    const unmarked = commandBlocks.filter((b) => !b.marker).map(where);
    expect(unmarked, 'add <!-- example: … --> above these blocks (see test/support/doc-examples.ts)').toEqual([]);
  });

  it('generated pages name the script that writes them, and it exists', () => {
    for (const [page, script] of GENERATED_DOCS) {
      expect(readFileSync(path.join(repoRoot, page), 'utf8')).toContain(script);
      expect(existsSync(path.join(repoRoot, script)), script).toBe(true);
    }
  });

  it('covered-by blocks are read by the test they name, or each command is in the file named', () => {
    for (const block of blocks.filter((b) => b.marker?.kind === 'covered-by')) {
      const targets = (block.marker?.target ?? '').split(',').filter((t) => t !== '');
      expect(targets.length, where(block)).toBeGreaterThan(0);
      const texts = targets.map((t) => {
        expect(existsSync(path.join(repoRoot, t)), `${where(block)}: ${t}`).toBe(true);
        return readFileSync(path.join(repoRoot, t), 'utf8');
      });
      const id = block.marker?.id;
      if (id !== undefined && texts.some((text) => text.includes(`docExample('${id}')`))) continue;
      for (const line of commandLines(block.code)) {
        const script = /^bash (\S+)/.exec(line)?.[1];
        const found = texts.some((text) => text.includes(line) || (script !== undefined && text.includes(script)));
        expect(found, `${where(block)}: "${line}" is in none of ${targets.join(', ')}`).toBe(true);
      }
    }
  });

  it('flags blocks name programs and options that exist', () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const block of blocks.filter((b) => b.marker?.kind === 'flags')) {
      for (const line of commandLines(block.code)) {
        const program = programOf(line, pkg.scripts);
        if (program === undefined) continue;
        expect(program.file !== '' && existsSync(path.join(repoRoot, program.file)), `${where(block)}: no program for "${line}"`).toBe(true);
        const source = programSource(program.file);
        for (const flag of program.flags) {
          const name = flag.slice(2).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          const declared = new RegExp(`(^|[\\s{,])'?${name}'?\\s*:\\s*\\{`, 'm').test(source) || source.includes(`'${flag}'`);
          expect(declared, `${where(block)}: ${program.file} declares no option ${flag}`).toBe(true);
        }
      }
    }
  });

  it('response blocks belong to a run block', () => {
    const runIds = new Set(blocks.filter((b) => b.marker?.kind === 'run').map((b) => b.marker?.id));
    for (const block of blocks.filter((b) => b.marker?.kind === 'response')) expect(runIds.has(block.marker?.id), where(block)).toBe(true);
  });
});

/** The script a documented measurement runs, and the flags it passes. */
function programOf(line: string, scripts: Record<string, string>): { file: string; flags: string[] } | undefined {
  const words = line.split(/\s+/);
  const flags = words.filter((w) => /^--[a-z]/.test(w)).map((w) => w.replace(/=.*$/, ''));
  const tsx = words.indexOf('tsx');
  if (tsx !== -1 && words[tsx - 1] === 'npx') return { file: words[tsx + 1] ?? '', flags };
  const run = words.indexOf('run');
  if (run !== -1 && words[run - 1] === 'npm') {
    const script = scripts[words[run + 1] ?? ''] ?? '';
    return { file: /(\S+\.ts)/.exec(script)?.[1] ?? '', flags };
  }
  return undefined;
}

/** A program's source with the files beside it that parse its options (bench/ shares an options module). */
function programSource(file: string): string {
  const dir = path.dirname(path.join(repoRoot, file));
  const own = readFileSync(path.join(repoRoot, file), 'utf8');
  const imported = [...own.matchAll(/from '(\.[^']+)'/g)].map((m) => path.join(dir, (m[1] ?? '').replace(/\.js$/, '.ts')));
  return [own, ...imported.filter(existsSync).map((f) => readFileSync(f, 'utf8'))].join('\n');
}

const hasCurl = spawnSync('curl', ['--version']).status === 0;

describe.runIf(
  available('curl', hasCurl) &&
    available('the PostgreSQL documentation (postgresql-doc-15)', existsSync(pgDocsDir)) &&
    fileAvailable('the shared bi-encoder (served by the local model hub)', path.join(biEncoderDir, 'onnx', 'model.onnx')),
)(
  'docs examples: the run blocks, run',
  () => {
    let root: string;
    let site: StaticServer;
    let server: RunningServer | undefined;
    let hub: FakeHub | undefined;
    const env: Record<string, string> = {
      NOTARY_LOG_LEVEL: 'warn',
      NOTARY_MODEL_DOWNLOAD: 'false',
      NOTARY_EMBEDDING_MODEL: 'off',
      NOTARY_ALLOW_PRIVATE_NETWORKS: 'true',
      // The local copy links to pages it does not hold; without the politeness delay their 404s take no time.
      NOTARY_CRAWL_DELAY_MS: '0',
      NOTARY_METRICS_TOKEN: 'docs-world-metrics-token',
    };

    beforeAll(async () => {
      root = mkdtempSync(path.join(tmpdir(), 'notary-docs-'));
      const copy = path.join(root, 'site');
      mkdirSync(copy);
      for (const page of PGDOCS_PAGES) symlinkSync(path.join(pgDocsDir, page), path.join(copy, page));
      const links = PGDOCS_PAGES.map((page) => `<li><a href="${page}">${page}</a></li>`).join('');
      writeFileSync(path.join(copy, 'index.html'), `<html><head><title>PostgreSQL documentation (a local copy)</title></head><body><ul>${links}</ul></body></html>`);
      site = await serveDirectory(copy);
      // The model hub, on 127.0.0.1 with ../shared's files under a test pin manifest, for `notary models pull`.
      const { pins, files } = sharedModels();
      hub = await startFakeHub(files);
      env['NOTARY_HUB_URL'] = hub.url;
      env['NOTARY_MODEL_PINS'] = writePins(path.join(root, 'pins.json'), pins);
      const data = path.join(root, 'data');
      mkdirSync(data);
      server = await startServer(['--data', data, '--no-crawl'], await freePort(), env);
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      await site?.close();
      await hub?.close();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    /** Runs one block in the page's shell session (variables carry over), in the world's folder. */
    const runBlock = (block: DocBlock, state: string) => {
      const port = new URL(server?.url ?? '').port;
      const code = block.code
        .replaceAll(DOCS_URL, `${site.url}/`)
        .replaceAll('localhost:8080', `127.0.0.1:${port}`)
        .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
      const script = [
        'set -euo pipefail -a',
        `npx() { case "$1" in notary) shift; "${process.execPath}" "${path.join(repoRoot, 'bin/notary.js')}" "$@";; ` +
          `tsx) shift; "${path.join(repoRoot, 'node_modules/.bin/tsx')}" "$@";; *) echo "docs example: npx $1 is not a command of this checkout" >&2; return 127;; esac; }`,
        `curl() { command curl -w '%{stderr}docs-example-status=%{http_code}\\n' "$@"; }`,
        `[ -f "${state}" ] && source "${state}"`,
        code,
        `export -p > "${state}"`,
      ].join('\n');
      // Not spawnSync: the local copy of the docs is served from this process, which must stay free to answer.
      return runChild('bash', ['-c', script], { cwd: root, env, timeoutMs: 300_000 });
    };

    for (const file of docFiles()) {
      const runs = docBlocks(file).filter((b) => b.marker?.kind === 'run');
      if (runs.length === 0) continue;
      it(`${file}: ${runs.length} block(s) run as shown`, async () => {
        const state = path.join(root, 'shell-state');
        for (const block of runs) {
          const out = await runBlock(block, state);
          const shown = `${where(block)} exited ${out.code}\n--- stdout\n${out.stdout}\n--- stderr\n${out.stderr}`;
          expect(out.code, shown).toBe(0);
          const statuses = [...out.stderr.matchAll(/docs-example-status=(\d{3})/g)].map((m) => Number(m[1]));
          const allowed = (block.marker?.attrs['expect'] ?? '').split(',').filter((s) => s !== '').map(Number);
          for (const status of statuses) expect(status < 400 || allowed.includes(status), `${shown}\nHTTP ${status}`).toBe(true);
          for (const header of shownHeaders(block.code)) expect(out.stdout.toLowerCase(), `${shown}\nheader ${header}`).toContain(`\n${header.toLowerCase()}:`);
          const response = docBlocks(file).find((b) => b.marker?.kind === 'response' && b.marker.id === block.marker?.id);
          if (response) expectSameShape(JSON.parse(response.code) as unknown, lastJson(out.stdout), `${where(response)} against the real answer`);
        }
      }, 600_000);
    }

    it('a block edited to be wrong fails (the check above can fail)', async () => {
      const extract = blocks.find((b) => b.marker?.kind === 'run' && b.marker.id === 'first-extract');
      expect(extract?.code, 'the README extract example').toContain('{"url":');
      const wrong = { ...(extract as DocBlock), code: (extract as DocBlock).code.replace('{"url":', '{"link":') };
      const out = await runBlock(wrong, path.join(root, 'shell-state'));
      const statuses = [...out.stderr.matchAll(/docs-example-status=(\d{3})/g)].map((m) => Number(m[1]));
      // Without url (or urls) the body is answered 422 invalid_batch (issue 29: one page or a batch).
      expect(statuses).toEqual([422]);
    }, 600_000);

    it('the page list of the docs world is served (a missing page would make the crawl example vacuous)', async () => {
      const listed = await runCli(['--data', path.join(root, 'data'), 'status', '--json'], env, 60_000);
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as { pages?: number }).pages, listed.stdout).toBe(PGDOCS_PAGES.length + 1);
    }, 120_000);
  },
);

function lastJson(stdout: string): unknown {
  const start = stdout.lastIndexOf('\n{') + 1;
  return JSON.parse(stdout.slice(start)) as unknown;
}

/** Every field the docs show is in the real answer with the same JSON type (values may differ). */
function expectSameShape(shown: unknown, real: unknown, at: string): void {
  if (Array.isArray(shown)) {
    expect(Array.isArray(real), at).toBe(true);
    if (shown.length > 0) {
      expect((real as unknown[]).length, `${at}: the docs show an entry, the real answer has none`).toBeGreaterThan(0);
      expectSameShape(shown[0], (real as unknown[])[0], `${at}[0]`);
    }
    return;
  }
  if (shown !== null && typeof shown === 'object') {
    expect(real !== null && typeof real === 'object', at).toBe(true);
    for (const [key, value] of Object.entries(shown)) {
      expect(Object.keys(real as object), `${at}: field ${key}`).toContain(key);
      expectSameShape(value, (real as Record<string, unknown>)[key], `${at}.${key}`);
    }
    return;
  }
  if (shown === null) return;
  expect(typeof real, at).toBe(typeof shown);
}

