import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { apiTestConfig, startApi } from '../testkit/app.js';

function raw(port: number, headers: string[], body: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(`POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.join('\r\n')}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    });
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out.split('\r\n')[0] + ' ' + out.slice(out.indexOf('\r\n\r\n') + 4, out.indexOf('\r\n\r\n') + 220)));
  });
}

/** Schemathesis sent `__proto__: B` to POST /v1/search and got a 500 (the paid path's header record had a prototype). */
it('a header named __proto__ or constructor is a header like any other, never a 500', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-header-names-'));
  const api = await startApi(apiTestConfig(dir));
  try {
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (api.app.server.address() as { port: number }).port;
    const body = '{"query":"vacuum","depth":2,"undated":"exclude","max_results":6}';
    for (const h of [['__proto__: B'], ['constructor: x', 'hasOwnProperty: y'], ['Authorization: Bearer x', '__proto__: B']]) {
      const answer = await raw(port, h, body);
      expect(answer, JSON.stringify(h)).toMatch(/^HTTP\/1\.1 401 /);
    }
  } finally {
    await api.app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
