import { html, writeSite } from '../../testkit/crawl-site.js';
import { serveDirectory, type StaticServer } from '../../testkit/serve-static.js';

/** A site of `pages` linked pages under /docs/ on 127.0.0.1, each about a heliotrope-coloured topic only it names. */
export async function startCrawlJobSite(pages: number): Promise<StaticServer> {
  const files: Record<string, string> = {
    'docs/index.html': html('Heliotrope handbook', Array.from({ length: pages - 1 }, (_, i) => `<a href="p${i}.html">chapter ${i}</a>`).join(' ')),
  };
  for (let i = 0; i < pages - 1; i++) {
    files[`docs/p${i}.html`] = html(`Chapter ${i}`, `<p>${`Chapter ${i} of the heliotrope handbook explains the marmalade lighthouse number ${i}. `.repeat(12)}</p>`);
  }
  return serveDirectory(writeSite(files));
}

/** Polls until `probe` gives a value, or fails after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
