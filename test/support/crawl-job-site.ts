import { html, writeSite } from '../../testkit/crawl-site.js';
import { serveDirectory, type StaticServer } from '../../testkit/serve-static.js';
import { until as pollUntil } from '../../testkit/until.js';

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

/** Polls until `probe` gives a value, or fails after `timeoutMs` (testkit/until.ts, with the name first). */
export function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  return pollUntil(probe, what, timeoutMs);
}
