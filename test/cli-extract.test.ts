import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testkit/cli.js';

/**
 * `notary extract FILE` decodes a local file as /v1/extract decodes a response: a byte-order mark, then <meta charset>,
 * then UTF-8 when valid, else windows-1252 (not always UTF-8).
 */
const PROSE =
  'The café on the corner serves crème brûlée and “proper” coffee, and the façade was restored in 2019 by the same ' +
  'mason who repaired the cathedral, working through a long, wet winter.';

function page(body: string, head = ''): string {
  return `<!doctype html><html><head>${head}<title>Corner café</title></head><body><article><h1>Corner café</h1><p>${body}</p><p>${body}</p></article></body></html>`;
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'notary-cli-extract-'));
  // windows-1252 bytes, declared by <meta charset>; read as UTF-8 they would be replacement characters.
  writeFileSync(path.join(dir, 'cp1252.html'), Buffer.from(page(PROSE.replace('“', '\x93').replace('”', '\x94'), '<meta charset="windows-1252">'), 'latin1'));
  // UTF-16LE with its byte-order mark.
  writeFileSync(path.join(dir, 'utf16.html'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page(PROSE), 'utf16le')]));
  // Latin-1 without any label and not valid UTF-8: windows-1252, as browsers assume.
  writeFileSync(path.join(dir, 'unlabelled.html'), Buffer.from(page(PROSE.replace('“', '"').replace('”', '"')), 'latin1'));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('notary extract FILE', () => {
  it.each(['cp1252.html', 'utf16.html', 'unlabelled.html'])('decodes %s like a fetched response', async (name) => {
    const res = await runCli(['extract', path.join(dir, name), '--mode', 'text', '--json', '--data', path.join(dir, 'data')], {}, 120_000);
    expect(res.code, res.stderr).toBe(0);
    const result = JSON.parse(res.stdout) as { title: string; content: string };
    expect(result.title).toBe('Corner café');
    expect(result.content).toContain('crème brûlée');
    expect(result.content).toContain('façade');
    expect(result.content).not.toContain('\ufffd');
  });
});

describe('notary extract --include-comments', () => {
  it('prints the article alone by default and with its reader comments when asked', async () => {
    const file = path.resolve(import.meta.dirname, 'fixtures/extract-shapes/article-responses.html');
    const run = async (extra: string[]) => {
      const res = await runCli(['extract', file, '--mode', 'text', '--json', ...extra, '--data', path.join(dir, 'data')], {}, 120_000);
      expect(res.code, res.stderr).toBe(0);
      return (JSON.parse(res.stdout) as { content: string }).content;
    };
    expect(await run([])).not.toContain('tartan shopping trolley');
    expect(await run(['--include-comments'])).toContain('tartan shopping trolley');
  }, 240_000);
});
