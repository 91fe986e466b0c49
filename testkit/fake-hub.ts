import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { PinnedModel } from '../reranker/models.js';
import { biEncoderDir, crossEncoderDir } from './models.js';

/**
 * A model hub on 127.0.0.1 in the hub's layout (`<hub>/<repo>/resolve/<revision>/<path>`), serving ../shared's
 * model files, with Range support and hooks to misbehave (cut a transfer, stall, answer 404). The pins of a test
 * manifest are the served files' own sha256.
 */

export interface HubRequest {
  url: string;
  range: string | undefined;
  /** Body bytes sent (after a cut, what was sent before it). */
  sent: number;
}

/** What the hub does with one request: serve it, or misbehave. */
export type Behaviour =
  | { kind: 'serve' }
  /** Sends the headers and the first `after` bytes of the body, then destroys the connection. */
  | { kind: 'cut'; after: number }
  /** Accepts and never answers. */
  | { kind: 'silent' }
  /** Sends the headers and `after` bytes, then nothing more. */
  | { kind: 'stall'; after: number }
  | { kind: 'status'; status: number }
  /** Serves the whole file with 200 whatever Range asks (a server without Range support). */
  | { kind: 'ignore-range' };

export interface FakeHub {
  url: string;
  requests: HubRequest[];
  files: Map<string, Buffer>;
  /** Decides per request (default: serve). */
  behave: (req: IncomingMessage, attempt: number) => Behaviour;
  /** Bytes per second for bodies (0: as fast as possible). */
  throttle: number;
  close(): Promise<void>;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** ../shared's two models as pinned models, with the files the hub serves for them. */
export function sharedModels(revision = 'test-revision'): { pins: PinnedModel[]; files: Map<string, Buffer> } {
  const sources: Array<{ name: string; kind: PinnedModel['kind']; repo: string; dir: string; map: Record<string, string> }> = [
    {
      name: 'ms-marco-MiniLM-L-6-v2',
      kind: 'cross-encoder',
      repo: 'cross-encoder/ms-marco-MiniLM-L-6-v2',
      dir: crossEncoderDir,
      map: { 'onnx/model.onnx': 'onnx/model_random_weights_int8.onnx', 'tokenizer.json': 'tokenizer.json', 'config.json': 'config.json' },
    },
    {
      name: 'all-MiniLM-L6-v2',
      kind: 'bi-encoder',
      repo: 'sentence-transformers/all-MiniLM-L6-v2',
      dir: biEncoderDir,
      map: { 'onnx/model.onnx': 'onnx/model.onnx', 'tokenizer.json': 'tokenizer.json', 'config.json': 'config.json' },
    },
  ];
  const files = new Map<string, Buffer>();
  const pins = sources.map((s) => ({
    name: s.name,
    kind: s.kind,
    repo: s.repo,
    revision,
    onnxFile: 'onnx/model.onnx',
    files: Object.entries(s.map).map(([file, local]) => {
      const bytes = readFileSync(path.join(s.dir, local));
      files.set(`/${s.repo}/resolve/${revision}/${file}`, bytes);
      return { path: file, sha256: sha256(bytes), bytes: bytes.length };
    }),
  }));
  return { pins, files };
}

/** Writes a pin manifest for NOTARY_MODEL_PINS. */
export function writePins(file: string, pins: readonly PinnedModel[]): string {
  writeFileSync(file, JSON.stringify(pins, null, 2));
  return file;
}

export async function startFakeHub(files: Map<string, Buffer>): Promise<FakeHub> {
  const attempts = new Map<string, number>();
  const hub: FakeHub = {
    url: '',
    requests: [],
    files,
    behave: () => ({ kind: 'serve' }),
    throttle: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '';
    const attempt = (attempts.get(url) ?? 0) + 1;
    attempts.set(url, attempt);
    const record: HubRequest = { url, range: req.headers.range, sent: 0 };
    hub.requests.push(record);
    const behaviour = hub.behave(req, attempt);
    if (behaviour.kind === 'silent') return;
    if (behaviour.kind === 'status') {
      res.writeHead(behaviour.status).end('no');
      return;
    }
    const body = files.get(url);
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    void send(req, res, body, behaviour, record, hub.throttle);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return hub;
}

async function send(req: IncomingMessage, res: ServerResponse, body: Buffer, behaviour: Behaviour, record: HubRequest, throttle: number): Promise<void> {
  const range = behaviour.kind === 'ignore-range' ? null : /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const start = range ? Number(range[1]) : 0;
  if (start >= body.length && range) {
    res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
    return;
  }
  const part = body.subarray(start);
  res.writeHead(range ? 206 : 200, {
    'content-length': part.length,
    'content-type': 'application/octet-stream',
    ...(range ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
  });
  const limit = behaviour.kind === 'cut' || behaviour.kind === 'stall' ? behaviour.after : part.length;
  const chunk = 256 * 1024;
  for (let at = 0; at < limit; at += chunk) {
    const piece = part.subarray(at, Math.min(limit, at + chunk));
    if (!res.write(piece)) await new Promise((resolve) => res.once('drain', resolve));
    record.sent += piece.length;
    if (throttle > 0) await new Promise((resolve) => setTimeout(resolve, (piece.length / throttle) * 1000));
    if (res.destroyed) return;
  }
  if (behaviour.kind === 'cut') {
    // Give the bytes time to leave, then drop the connection mid-file.
    await new Promise((resolve) => setTimeout(resolve, 50));
    res.socket?.destroy();
    return;
  }
  if (behaviour.kind === 'stall') return;
  res.end();
}
