import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testkit/cli.js';
import { fileAvailable } from '../testkit/components.js';
import { sharedModels, startFakeHub, writePins, type FakeHub } from '../testkit/fake-hub.js';
import { biEncoderDir } from '../testkit/models.js';

/**
 * Both pinned models from a hub on 127.0.0.1 serving ../shared's files under a test pin manifest (NOTARY_MODEL_PINS):
 * two starts at once fetch each file once and both report both models; `notary models pull` (progress, --to) and
 * `notary models install <dir>` (checked against the pins, what differs reported).
 */

const present = fileAvailable('the shared bi-encoder', path.join(biEncoderDir, 'onnx', 'model.onnx'));
const root = mkdtempSync(path.join(tmpdir(), 'notary-cli-models-fetch-'));
let hub: FakeHub;
let pinsFile = '';
let env: Record<string, string> = {};
const { pins, files } = present ? sharedModels() : { pins: [], files: new Map<string, Buffer>() };

beforeAll(async () => {
  if (!present) return;
  hub = await startFakeHub(files);
  pinsFile = writePins(path.join(root, 'pins.json'), pins);
  env = { NOTARY_MODEL_PINS: pinsFile, NOTARY_HUB_URL: hub.url, NOTARY_RERANKER_MODEL: '', NOTARY_EMBEDDING_MODEL: 'reranker', NOTARY_MODEL_DOWNLOAD: 'true' };
});
afterAll(async () => {
  await hub?.close();
  rmSync(root, { recursive: true, force: true });
});

const modelFile = (cache: string, name: string): string => path.join(cache, name, 'onnx', 'model.onnx');
const served = (name: string): Buffer => files.get(`/${pins.find((p) => p.name === name)?.repo ?? ''}/resolve/test-revision/onnx/model.onnx`) as Buffer;

interface Status {
  reranker: { kind: string; model: string; source: string };
  retrieval: { mode: string; why?: string | null; vectors?: { model: string } };
}

describe.runIf(present)('fetching both pinned models', () => {
  it('two starts at once fetch each file once, and both report the bi-encoder and the cross-encoder', async () => {
    const data = path.join(root, 'twice');
    hub.requests.length = 0;
    // Slow enough that the two processes overlap.
    hub.throttle = 60 * 1024 * 1024;
    const [a, b] = await Promise.all([runCli(['--data', data, 'status', '--json'], env), runCli(['--data', data, 'status', '--json'], env)]);
    hub.throttle = 0;
    for (const run of [a, b]) {
      expect(run.code, run.stderr).toBe(0);
      const status = JSON.parse(run.stdout) as Status;
      expect(status.reranker.kind).toBe('cross-encoder');
      expect(status.reranker.model).toMatch(/^ms-marco-MiniLM-L-6-v2 /);
      // embeddings.precision int8 (the default): vectors of the int8 copy made at this first start.
      expect(status.retrieval).toMatchObject({ mode: 'hybrid', vectors: { model: expect.stringMatching(/^all-MiniLM-L6-v2-int8@sha256:/) } });
      expect(run.stderr).not.toMatch(/WARNING/);
    }
    const urls = hub.requests.map((r) => r.url).sort();
    expect(urls).toEqual([...files.keys()].sort());
    const cache = path.join(data, 'models');
    expect(readFileSync(modelFile(cache, 'all-MiniLM-L6-v2')).equals(served('all-MiniLM-L6-v2'))).toBe(true);
    // embeddings.precision int8 (the default): the bi-encoder's int8 copy, made once beside them.
    expect(readdirSync(cache).sort()).toEqual(['all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8', 'ms-marco-MiniLM-L-6-v2']);
  });

  it('models pull fetches with progress, says what is present, and fails with the remedy when the hub is gone', async () => {
    const data = path.join(root, 'pull');
    hub.throttle = 80 * 1024 * 1024;
    const pulled = await runCli(['--data', data, 'models', 'pull'], env);
    hub.throttle = 0;
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/^fetched ms-marco-MiniLM-L-6-v2 \(cross-encoder, cross-encoder\/ms-marco-MiniLM-L-6-v2@test-revision\) in .*, sha256 of 3 files match the pins$/m);
    expect(pulled.stdout).toMatch(/^fetched all-MiniLM-L6-v2 \(bi-encoder, /m);
    expect(pulled.stderr).toMatch(/all-MiniLM-L6-v2 onnx\/model\.onnx: [\d.]+ MB of 90\.\d MB \(\d+%\), [\d.]+ MB\/s, \d+ s left/);
    expect(pulled.stderr).toMatch(/all-MiniLM-L6-v2 onnx\/model\.onnx: 90\.\d MB of 90\.\d MB \(100%\), done/);

    expect(pulled.stdout).toMatch(/^made {4}all-MiniLM-L6-v2-int8 \(int8 copy of all-MiniLM-L6-v2 for embeddings\.precision int8\) in /m);
    expect(pulled.stderr).toMatch(/embeddings: making the int8 copy of .*all-MiniLM-L6-v2/);

    const again = await runCli(['--data', data, 'models', 'pull'], env);
    expect(again.stdout).toMatch(/^present all-MiniLM-L6-v2 /m);
    expect(again.stdout).toMatch(/^present all-MiniLM-L6-v2-int8 /m);

    const gone = await runCli(['--data', path.join(root, 'pull-gone'), 'models', 'pull'], { ...env, NOTARY_HUB_URL: 'http://127.0.0.1:9' });
    expect(gone.code).toBe(1);
    expect(gone.stdout).toMatch(/^FAILED {2}ms-marco-MiniLM-L-6-v2 .*cannot reach/m);
    expect(gone.stdout).toMatch(/^fix: reach http:\/\/127\.0\.0\.1:9 \(or a mirror: reranker\.hub_url \/ NOTARY_HUB_URL\)/m);
  });

  it('models pull --to DIR, then models install DIR on a machine without the hub; a folder that differs from the pins is reported, not installed', async () => {
    const copy = path.join(root, 'air-gap');
    const pulled = await runCli(['--data', path.join(root, 'online'), 'models', 'pull', '--to', copy], env);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toContain(`copy ${copy} to the machine and run: notary models install <that folder>`);
    expect(existsSync(path.join(root, 'online', 'models'))).toBe(false);

    const offline = { ...env, NOTARY_HUB_URL: 'http://127.0.0.1:9' };
    const data = path.join(root, 'offline');
    const installed = await runCli(['--data', data, 'models', 'install', copy], offline);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(/^installed cross-encoder ms-marco-MiniLM-L-6-v2 from .* its 3 files match the pins of cross-encoder\/ms-marco-MiniLM-L-6-v2$/m);
    expect(installed.stdout).toMatch(/^installed bi-encoder all-MiniLM-L6-v2 from /m);
    const status = await runCli(['--data', data, 'status', '--json'], offline);
    expect(status.stderr).not.toMatch(/WARNING/);
    expect((JSON.parse(status.stdout) as Status).retrieval.mode).toBe('hybrid');

    // ../shared's export under the real pins (no test manifest): a different file than the hub's, so it is refused.
    const real = { NOTARY_RERANKER_MODEL: '', NOTARY_HUB_URL: 'http://127.0.0.1:9' };
    const refused = await runCli(['--data', path.join(root, 'real-pins'), 'models', 'install', biEncoderDir], real);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(
      /^NOT installed all-MiniLM-L6-v2 from .*: it differs from the pins of sentence-transformers\/all-MiniLM-L6-v2: onnx\/model\.onnx has \d+ bytes, the pin 90405214; tokenizer\.json has 711661 bytes, the pin 466247; config\.json sha256 7135149f7cff…, the pin 953f9c0d4634…\. A model of your own: notary models install .* --name <another-name>, then NOTARY_EMBEDDING_MODEL=<its folder>$/m,
    );
    expect(existsSync(path.join(root, 'real-pins', 'models', 'all-MiniLM-L6-v2'))).toBe(false);
  });
});
