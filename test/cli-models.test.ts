import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossEncoderDir } from '../testkit/models.js';
import { runCli } from '../testkit/cli.js';

/**
 * Without a model: the failed download is remembered (the next commands do not contact the hub), the warning is one
 * line with the real remedy, no empty folders are left, and status says which scorer is live and why.
 * `notary models install|list|verify` with a local folder.
 */

let hub: Server;
let hubUrl = '';
const hubRequests: string[] = [];
const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-cli-models-'));

beforeAll(async () => {
  hub = createServer((req, res) => {
    hubRequests.push(req.url ?? '');
    res.writeHead(404).end('no such model here');
  });
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
  hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify({ reranker: { hub_url: hubUrl }, embeddings: { model: 'off' } }));
});
afterAll(async () => {
  await new Promise<void>((resolve) => hub.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

const env = { NOTARY_RERANKER_MODEL: '', NOTARY_MODEL_DOWNLOAD: 'true' };

describe('notary without a model, and notary models', () => {
  it('tries the download once, remembers the failure, warns in one line and leaves no empty folder', async () => {
    const first = await runCli(['--data', dataDir, 'search', 'vacuum', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(hubRequests.length).toBe(1);
    const warnings = first.stderr.split('\n').filter((l) => l.startsWith('WARNING'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/LEXICAL FALLBACK.*HTTP 404.*next try after .*Fix: notary models pull .* or notary models install <dir> .*--name ms-marco-MiniLM-L-6-v2/);
    expect(readdirSync(path.join(dataDir, 'models'))).toEqual(['ms-marco-MiniLM-L-6-v2.download-failed.json']);

    const human = await runCli(['--data', dataDir, 'status'], env);
    expect(human.stdout).toMatch(/reranker\s+lexical fallback, term overlap only: no neural model: .*download failed at .*next try after/);
    const second = await runCli(['--data', dataDir, 'search', 'vacuum'], env);
    expect(second.stderr.split('\n').filter((l) => l.startsWith('WARNING'))).toHaveLength(1);
    const again = await runCli(['--data', dataDir, 'status', '--json'], env);
    expect(hubRequests.length).toBe(1);
    const status = JSON.parse(again.stdout) as { reranker: { kind: string; why: string } };
    expect(status.reranker.kind).toBe('lexical');
    expect(status.reranker.why).toMatch(/download failed at .*next try after/);
  });

  it('installs a local model folder, lists it, verifies it, and refuses a broken one', async () => {
    const installed = await runCli(['--data', dataDir, 'models', 'install', crossEncoderDir, '--name', 'marco-local'], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`installed cross-encoder int8 model marco-local into ${path.join(dataDir, 'models', 'marco-local')}`);
    expect(installed.stdout).toContain(`use it: NOTARY_RERANKER_MODEL=${path.join(dataDir, 'models', 'marco-local')}`);

    const list = await runCli(['--data', dataDir, 'models', 'list'], env);
    expect(list.stdout).toMatch(/marco-local\s+[\d.]+ MB\s+cross-encoder, int8, onnx\/model_random_weights_int8\.onnx/);
    expect(list.stdout).toMatch(/download\s+ms-marco-MiniLM-L-6-v2 failed at .* not tried again before/);
    expect(list.stdout).toMatch(/live\s+lexical/);

    const verified = await runCli(['--data', dataDir, 'models', 'verify', 'marco-local'], env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^OK\s+marco-local/m);
    expect(verified.stdout).toContain('loads in ONNX Runtime and scores (cross-encoder, int8');

    // With the installed folder named as the model, it is the live scorer, and status says why.
    const live = await runCli(['--data', dataDir, 'status'], { ...env, NOTARY_RERANKER_MODEL: path.join(dataDir, 'models', 'marco-local') });
    expect(live.stdout).toMatch(/reranker\s+cross-encoder marco-local .*: named by NOTARY_RERANKER_MODEL; int8, onnx\/model_random_weights_int8\.onnx/);

    const broken = mkdtempSync(path.join(tmpdir(), 'notary-broken-model-'));
    mkdirSync(path.join(broken, 'onnx'));
    copyFileSync(path.join(crossEncoderDir, 'tokenizer.json'), path.join(broken, 'tokenizer.json'));
    copyFileSync(path.join(crossEncoderDir, 'config.json'), path.join(broken, 'config.json'));
    writeFileSync(path.join(broken, 'onnx', 'model.onnx'), 'not an onnx file');
    const refused = await runCli(['--data', dataDir, 'models', 'install', broken], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not load.*\[model_unavailable\]/);
    expect(existsSync(path.join(dataDir, 'models', path.basename(broken)))).toBe(false);
    const failedVerify = await runCli(['--data', dataDir, 'models', 'verify', broken], env);
    expect(failedVerify.code).toBe(1);
    expect(failedVerify.stdout).toMatch(/^FAIL/m);
    rmSync(broken, { recursive: true, force: true });
  });
});
