/**
 * The Meilisearch client's HTTP requests over node:http with kept-alive connections (issue 34). The client's own
 * `fetch` spends 2–4 ms of CPU on a request and 9–12 ms on reading a 300 kB search answer (its web streams); node:http
 * over a kept-alive connection spends 0.3 ms and 3.5 ms (measured on the bench machine, bench/results/*meili*). One
 * request at a time per connection (no pipelining), connections reused, at most `maxSockets` open.
 *
 * The client wraps whatever its HTTP function throws in a MeilisearchRequestError: an answer that is not 2xx is thrown
 * as the MeilisearchApiError the client's fetch would have raised, and `apiErrorOf` finds it inside the wrapper.
 */
import http from 'node:http';
import https from 'node:https';
import { MeilisearchApiError } from 'meilisearch';

export type HttpClient = (input: string | URL | Request, init?: RequestInit) => Promise<unknown>;

export interface KeepAliveClient {
  request: HttpClient;
  /** Closes the kept-alive connections. */
  close(): void;
}

export function keepAliveClient(maxSockets = 32): KeepAliveClient {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets }),
    'https:': new https.Agent({ keepAlive: true, maxSockets }),
  };
  const request: HttpClient = async (input, init = {}) => {
    const url = input instanceof URL ? input : new URL(typeof input === 'string' ? input : input.url);
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      // A body the client builds as something else (not sent by notary): the client's own fetch reads it.
      const res = await fetch(url, init);
      const text = await res.text();
      return answer(res.status, res.statusText, text);
    }
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    for (let attempt = 0; ; attempt++) {
      try {
        const { status, statusText, text } = await send(url, agents[url.protocol === 'https:' ? 'https:' : 'http:'], init.method ?? 'GET', headers, body ?? undefined, init.signal ?? undefined);
        return answer(status, statusText, text);
      } catch (err) {
        // A kept-alive connection the server closed while it was idle: the request never reached it; send again once.
        if (attempt === 0 && err instanceof StaleConnection) continue;
        throw err instanceof StaleConnection ? err.cause : err;
      }
    }
  };
  return { request, close: () => Object.values(agents).forEach((a) => a.destroy()) };
}

class StaleConnection extends Error {}

function send(
  url: URL,
  agent: http.Agent,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal | undefined,
): Promise<{ status: number; statusText: string; text: string }> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        signal?.removeEventListener('abort', onAbort);
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', fail);
    });
    function fail(err: unknown) {
      signal?.removeEventListener('abort', onAbort);
      const code = (err as NodeJS.ErrnoException | undefined)?.code;
      reject(req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') ? new StaleConnection('stale kept-alive connection', { cause: err }) : err);
    }
    // The client's timeout aborts with its own reason, which it turns into MeilisearchRequestTimeOutError.
    function onAbort() {
      req.destroy();
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', fail);
    req.end(body);
  });
}

function answer(status: number, statusText: string, text: string): unknown {
  const parsed: unknown = text === '' ? undefined : JSON.parse(text);
  if (status < 200 || status >= 300) {
    throw new MeilisearchApiError(new Response(text === '' ? null : text, { status, statusText }), parsed as ConstructorParameters<typeof MeilisearchApiError>[1]);
  }
  return parsed;
}

/** The MeilisearchApiError behind an error the client threw (it wraps its HTTP function's errors), if any. */
export function apiErrorOf(err: unknown): MeilisearchApiError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof MeilisearchApiError) return e;
  }
  return undefined;
}
