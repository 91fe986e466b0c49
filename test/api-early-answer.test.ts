import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, startServer, type RunningServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

/**
 * Requests answered before their declared body arrived (413, 415, a GET with a body, the dashboard's CSRF 403): the
 * body timer set for them must not outlive the answer. Before the fix each one killed `notary serve` about
 * body_timeout_ms later (an 'error' event nobody listened to).
 */
const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' };
const BODY_TIMEOUT_MS = 400;

/** Sends `head`, reads until the first answer's body is complete (by Content-Length), then closes. */
function answerThenClose(port: number, head: string, maxMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${maxMs} ms: ${JSON.stringify(text)}`));
    }, maxMs);
    socket.on('connect', () => socket.write(head));
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
      if (end >= 0 && length && text.length >= end + 4 + Number(length[1])) {
        clearTimeout(timer);
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('a request answered before its body arrived', () => {
  let data: string;
  let server: RunningServer;
  let port: number;

  beforeAll(async () => {
    data = mkdtempSync(path.join(tmpdir(), 'notary-early-answer-'));
    writeFileSync(path.join(data, 'notary.json'), JSON.stringify({ server: { body_timeout_ms: BODY_TIMEOUT_MS, body_limit_bytes: 65_536 } }));
    const created = await runCli(['--data', data, 'keys', 'create', '--tenant', 'acme', '--credits', '100'], env);
    expect(created.code, created.stderr).toBe(0);
  }, 120_000);
  // A server of its own per case: each case alone killed the process.
  beforeEach(async () => {
    port = await freePort();
    server = await startServer(['--data', data, '--no-crawl'], port, env);
  }, 60_000);
  afterEach(async () => {
    await server?.stop();
  });
  afterAll(() => {
    rmSync(data, { recursive: true, force: true });
  });

  const cases: Array<[string, string, RegExp]> = [
    ['a 413 for a large Content-Length', 'POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n', / 413 /],
    ['a 415 for a content type not served', 'POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Length: 5000\r\n\r\n', / 415 /],
    ['a GET that declares a body', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n', / (200|400|503) /],
    ["the dashboard's CSRF 403", 'POST /dashboard/api/v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n', / 403 /],
  ];

  for (const [name, head, status] of cases) {
    it(`${name}: the server answers, outlives the body timeout and keeps serving`, async () => {
      const answer = await answerThenClose(port, head);
      expect(answer.split('\r\n')[0]).toMatch(status);
      // Past the body timeout (the crash came when it fired), the process is alive and answering.
      await new Promise((r) => setTimeout(r, BODY_TIMEOUT_MS * 3));
      expect(server.child.exitCode, server.output()).toBeNull();
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(200);
      expect(server.output()).not.toMatch(/Unhandled 'error' event/);
    });
  }
});
