import { gunzipSync } from 'node:zlib';

export interface TextFetchResult {
  status: number;
  contentType: string | null;
  body: string;
}

/**
 * GET for the crawler's side files (robots.txt, sitemaps) with our User-Agent, a timeout and a size cap. Gzip files
 * (sitemap.xml.gz) are unpacked. Network failures reject; HTTP errors resolve with their status.
 */
export async function fetchText(
  url: string,
  options: { userAgent: string; timeoutMs: number; maxBytes: number; signal?: AbortSignal },
): Promise<TextFetchResult> {
  const signals = [AbortSignal.timeout(options.timeoutMs)];
  if (options.signal) signals.push(options.signal);
  const response = await fetch(url, {
    headers: { 'user-agent': options.userAgent, accept: '*/*' },
    redirect: 'follow',
    signal: AbortSignal.any(signals),
  });
  const contentType = response.headers.get('content-type');
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    return { status: response.status, contentType, body: '' };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > options.maxBytes) throw new Error(`${url} is larger than ${options.maxBytes} bytes`);
    chunks.push(chunk);
  }
  let bytes = Buffer.concat(chunks);
  // fetch already undoes Content-Encoding: gzip; a .gz file served as application/gzip still needs unpacking.
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes, { maxOutputLength: options.maxBytes });
  return { status: response.status, contentType, body: bytes.toString('utf8') };
}
