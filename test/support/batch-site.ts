import { startTestServer, type TestServer } from '../../testkit/upstream-server.js';
import { startBlackHole, type BlackHole } from './black-hole.js';

/**
 * The world of the batch extraction tests: a site on 127.0.0.1 with articles (answered after `delayMs`, so calls
 * overlap) and pages that answer 404, a server that accepts connections and never answers (the timeout), and a
 * cloud-metadata address the SSRF policy refuses whatever the config says. `urls` is a batch of 20 mixing them.
 */
export interface BatchSite {
  site: TestServer;
  hole: BlackHole;
  /** 20 URLs in this order: articles, 404s, blocked addresses and the black hole mixed. */
  urls: string[];
  /** What each URL of `urls` should come back as: true for an article, else the problem's code. */
  expected: Array<true | string>;
  /** How many of `urls` are articles. */
  articles: number;
  /** Article requests the site was answering at once, at most (its politeness as the site sees it). */
  maxInFlight(): number;
  /** Article requests the site received so far. */
  articleHits(): number;
  close(): Promise<void>;
}

export function articleHtml(n: number): string {
  return `<!doctype html><html lang="en"><head><title>Tides, part ${n}</title></head><body><article><h1>Tides, part ${n}</h1>
<p>Part ${n}. Tides are the rise and fall of sea levels caused by the combined effects of the gravitational forces
exerted by the Moon and the Sun and the rotation of the Earth. Most places see two high tides and two low tides a day.</p>
<p>Spring tides come when the Sun and Moon line up; neap tides when they are at right angles, a week after each spring
tide, with a range smaller than the average range of the tides at that place and time of the year.</p></article></body></html>`;
}

export async function startBatchSite(options: { delayMs?: number } = {}): Promise<BatchSite> {
  const delayMs = options.delayMs ?? 40;
  let inFlight = 0;
  let maxInFlight = 0;
  let articleHits = 0;
  const routes: Parameters<typeof startTestServer>[0] = {};
  for (let n = 1; n <= 20; n++) {
    routes[`/article/${n}`] = (_req, res) => {
      articleHits++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(articleHtml(n));
      }, delayMs);
    };
    routes[`/missing/${n}`] = (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    };
  }
  const site = await startTestServer(routes);
  const hole = await startBlackHole();
  const layout: Array<[string, true | string]> = [];
  // 14 articles, 3 pages that do not exist, 2 addresses the SSRF policy refuses, 1 server that never answers.
  for (let n = 1; n <= 14; n++) layout.push([`${site.origin}/article/${n}`, true]);
  for (let n = 1; n <= 3; n++) layout.push([`${site.origin}/missing/${n}`, 'upstream_not_found']);
  layout.push(['http://169.254.169.254/latest/meta-data/', 'blocked_address']);
  layout.push(['http://100.100.100.200/latest/meta-data/', 'blocked_address']);
  layout.push([`${hole.url}/never`, 'upstream_timeout']);
  // Interleaved, so failures sit between successes and the order of the answer is checked.
  const order = [0, 14, 1, 18, 2, 3, 15, 4, 19, 5, 6, 17, 7, 8, 16, 9, 10, 11, 12, 13];
  const mixed = order.map((i) => layout[i] as [string, true | string]);
  return {
    site,
    hole,
    urls: mixed.map(([url]) => url),
    expected: mixed.map(([, outcome]) => outcome),
    articles: 14,
    maxInFlight: () => maxInFlight,
    articleHits: () => articleHits,
    close: async () => {
      await site.close();
      await hole.close();
    },
  };
}
