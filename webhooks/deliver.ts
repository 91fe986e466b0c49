import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isNotaryError } from '../core/index.js';
import { vetWebhookUrl, type WebhookAddressSettings } from './address.js';

/** What one HTTP attempt gave: the status, or the registry code of the failure. */
export interface AttemptOutcome {
  status: number | null;
  errorCode: string | null;
  error: string | null;
  durationMs: number;
}

export interface PostOptions extends WebhookAddressSettings {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** Bytes of a receiver's answer that are read (and dropped); the rest is not waited for. */
const ANSWER_BYTES_READ = 64 * 1024;

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_host, options, callback) => {
    if (options.all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * One POST of a webhook message. The URL's host is vetted against the address policy first (every attempt: a name
 * may have been re-pointed since registration) and the connection goes to the vetted address only. Redirects are
 * not followed. The whole attempt (DNS, connect, headers, the first 64 KiB of the answer) must end within timeoutMs.
 */
export async function postWebhook(options: PostOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const done = (status: number | null, errorCode: string | null, error: string | null): AttemptOutcome => ({
    status,
    errorCode,
    error,
    durationMs: Math.round(performance.now() - started),
  });
  const url = new URL(options.url);
  const signal = AbortSignal.timeout(options.timeoutMs);
  let vetted;
  try {
    vetted = await vetWebhookUrl(url, options);
  } catch (err) {
    const code = isNotaryError(err) ? err.code : 'upstream_unreachable';
    return done(null, code, (err as Error).message);
  }
  if (signal.aborted) return done(null, 'upstream_timeout', `no answer within ${options.timeoutMs} ms (webhooks.timeout_ms)`);
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(outcome);
    };
    const onAbort = (): void => finish(done(null, 'upstream_timeout', `no answer within ${options.timeoutMs} ms (webhooks.timeout_ms)`));
    const request = url.protocol === 'https:' ? https.request : http.request;
    const req = request(url, {
      method: 'POST',
      lookup: pinnedLookup(vetted.address, vetted.family),
      agent: false,
      headers: { ...options.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(options.body)) },
    });
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => finish(done(null, 'upstream_unreachable', err.message)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      const end = (): void => finish(done(status, status >= 200 && status < 300 ? null : 'upstream_error', status >= 200 && status < 300 ? null : `the receiver answered ${status}`));
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= ANSWER_BYTES_READ) end();
      });
      res.on('end', end);
      res.on('error', end);
    });
    req.end(options.body);
  });
}
