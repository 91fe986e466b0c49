import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedAddressReason, classifyAddress, vetUrl, type AddressPolicy } from './address-policy.js';
import { FetchCache } from './cache.js';
import { safeFetch, type FetchedDocument, type SafeFetchOptions } from './safe-fetch.js';
import { makePdf } from './test-pdf.js';
import { html, startTestServer, type Handler, type TestServer } from '../../testkit/upstream-server.js';

const UA = 'notary-crawler/0.1 (+https://example.test/crawler)';
const ARTICLE = '<!doctype html><html><head><title>Hello</title></head><body><p>Some words on a page.</p></body></html>';

let server: TestServer;

/** Loopback is allowed explicitly: these tests exercise everything but the address policy on 127.0.0.1. */
function local(extra: Partial<SafeFetchOptions> = {}): SafeFetchOptions {
  return { userAgent: UA, allowPrivateNetworks: true, respectRobotsTxt: false, ...extra };
}

function err(code: string): unknown {
  return expect.objectContaining({ name: 'NotaryError', code });
}

beforeAll(async () => {
  let cacheHits = 0;
  server = await startTestServer({
    '/page': html(ARTICLE),
    '/echo-host': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`host=${req.headers.host ?? ''} ua=${req.headers['user-agent'] ?? ''}`);
    },
    '/to-metadata': (_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    },
    '/to-metadata-mapped': (_req, res) => {
      res.writeHead(302, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' });
      res.end();
    },
    '/to-metadata-v6': (_req, res) => {
      res.writeHead(302, { location: 'http://[fd00:ec2::254]/latest/meta-data/' });
      res.end();
    },
    '/to-localhost': (_req, res) => {
      res.writeHead(301, { location: `http://localhost:${server.port}/page` });
      res.end();
    },
    '/to-mapped': (_req, res) => {
      res.writeHead(307, { location: `http://[::ffff:127.0.0.1]:${server.port}/page` });
      res.end();
    },
    '/to-decimal': (_req, res) => {
      res.writeHead(302, { location: `http://0x7f.0.0.2:${server.port}/page` });
      res.end();
    },
    '/hop': (req, res) => {
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0');
      res.writeHead(302, { location: n > 0 ? `/hop?n=${n - 1}` : '/page' });
      res.end();
    },
    '/loop': (_req, res) => {
      res.writeHead(302, { location: '/loop' });
      res.end();
    },
    '/to-ftp': (_req, res) => {
      res.writeHead(302, { location: 'ftp://example.test/file' });
      res.end();
    },
    '/huge': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = '<p>' + 'x'.repeat(64 * 1024) + '</p>';
      let sent = 0;
      const write = (): void => {
        while (sent < 200 && res.write(chunk)) sent++;
        if (sent >= 200) res.end();
        else res.once('drain', write);
      };
      write();
    },
    '/bomb': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20)));
    },
    '/gzip': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
      res.end(gzipSync(ARTICLE));
    },
    '/slow-headers': (_req, res) => {
      setTimeout(() => html(ARTICLE)(_req, res), 3_000).unref();
    },
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<p>start');
      setTimeout(() => res.end('</p>'), 3_000).unref();
    },
    '/cp1252-no-header': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(Buffer.from('<html><body><p>Caf\xe9 cr\xe8me \x93quoted\x94 \x80 5</p></body></html>', 'latin1'));
    },
    '/header-vs-meta': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' });
      res.end(Buffer.from('<html><head><meta charset="utf-8"></head><body><p>na\xefve</p></body></html>', 'latin1'));
    },
    '/meta-shift-jis': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const head = Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"></head><body><p>', 'latin1');
      // "日本語" in Shift_JIS.
      res.end(Buffer.concat([head, Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]), Buffer.from('</p></body></html>')]));
    },
    '/utf8-no-label': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(Buffer.from('<p>Zürich → 東京</p>', 'utf8'));
    },
    '/bom-beats-header': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<p>façade</p>', 'utf8')]));
    },
    '/doc.pdf': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(makePdf(['Quarterly report on lock contention.', 'Row locks dominate the waits.'], 'Lock Report'));
    },
    '/untyped.pdf': (_req, res) => {
      res.writeHead(200);
      res.end(makePdf(['Untyped PDF text.']));
    },
    '/plain': html('just some plain text\n\nsecond paragraph', 'text/plain; charset=utf-8'),
    '/image': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    },
    '/json': html('{"a":1}', 'application/json'),
    '/missing': (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<p>gone</p>');
    },
    '/broken': (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<p>down</p>');
    },
    '/counted': (_req, res) => {
      cacheHits++;
      html(`<p>version ${cacheHits}</p>`)(_req, res);
    },
    '/robots.txt': html('User-agent: notary-crawler\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n', 'text/plain'),
    '/private/page': html(ARTICLE),
  });
});

afterAll(async () => {
  await server.close();
});

describe('address policy', () => {
  it('refuses loopback, private, link-local, CGNAT, multicast, reserved and their IPv6 and mapped forms', () => {
    const blocked = [
      '127.0.0.1', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1',
      '224.0.0.1', '0.0.0.0', '0.1.2.3', '255.255.255.255', '240.0.0.1', '::1', '::', 'fc00::1', 'fd00::1',
      'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe',
      '64:ff9b::7f00:1', '2002:7f00:1::1',
    ];
    for (const address of blocked) expect(blockedAddressReason(address), address).not.toBeNull();
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(blockedAddressReason(address), address).toBeNull();
    }
  });

  it('refuses a name when any of its addresses is private, and reports DNS failures as unreachable', async () => {
    const resolver = async (host: string) =>
      host === 'mixed.test'
        ? [{ address: '93.184.216.34', family: 4 as const }, { address: '10.1.2.3', family: 4 as const }]
        : host === 'public.test'
          ? [{ address: '93.184.216.34', family: 4 as const }]
          : Promise.reject(new Error('ENOTFOUND'));
    const vet = (host: string) => vetUrl(new URL(`http://${host}/`), { allowPrivateNetworks: false, resolver });
    await expect(vet('mixed.test')).rejects.toEqual(err('blocked_address'));
    await expect(vet('public.test')).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    await expect(vet('nowhere.test')).rejects.toEqual(err('upstream_unreachable'));
  });

  it('never opens link-local and metadata addresses, in any spelling, even when private networks are allowed', async () => {
    const forbidden = [
      '169.254.169.254', '169.254.0.1', 'fe80::1', 'fe80::a9fe:a9fe', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '::169.254.169.254', 'fd00:ec2::254', '100.100.100.200',
      '168.63.129.16', '::ffff:100.100.100.200', '0.0.0.0', '::', '224.0.0.1', 'ff02::1', '255.255.255.255',
    ];
    const everything: AddressPolicy = { allowPrivateNetworks: true, allowedPrivateRanges: ['0.0.0.0/0', '::/0'], allowedPrivateHosts: ['meta.test'] };
    for (const address of forbidden) {
      expect(classifyAddress(address).class, address).toBe('forbidden');
      const resolver = async () => [{ address, family: address.includes(':') ? (6 as const) : (4 as const) }];
      await expect(vetUrl(new URL('http://meta.test/'), { ...everything, resolver }), address).rejects.toEqual(err('blocked_address'));
      const literal = address.includes(':') ? `[${address}]` : address;
      await expect(vetUrl(new URL(`http://${literal}/latest/meta-data/`), everything), literal).rejects.toEqual(err('blocked_address'));
    }
    for (const address of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '172.20.0.1', '100.64.1.1', '::1', 'fd12::1', '::ffff:10.0.0.1']) {
      expect(classifyAddress(address).class, address).toBe('private');
    }
  });

  it('opens private addresses inside allowed_private_ranges only, and the origins it is told to', async () => {
    const resolver = async (host: string) => [{ address: host === 'db.test' ? '10.9.0.5' : '10.20.0.5', family: 4 as const }];
    const policy: AddressPolicy = { allowPrivateNetworks: false, allowedPrivateRanges: ['10.20.0.0/16', 'fd12::/16'], resolver };
    await expect(vetUrl(new URL('http://wiki.test/'), policy)).resolves.toEqual({ address: '10.20.0.5', family: 4 });
    await expect(vetUrl(new URL('http://db.test/'), policy)).rejects.toEqual(err('blocked_address'));
    // The refusal names the settings that would allow it; a forbidden range says it cannot be allowed.
    await expect(vetUrl(new URL('http://db.test/'), policy)).rejects.toThrow(/extract\.allowed_private_ranges \(NOTARY_ALLOWED_PRIVATE_RANGES.*NOTARY_ALLOW_PRIVATE_NETWORKS=true/);
    await expect(vetUrl(new URL('http://169.254.169.254/'), policy)).rejects.toThrow(/cannot be allowed/);
    await expect(vetUrl(new URL('http://[fd12::1]/'), policy)).resolves.toEqual({ address: 'fd12::1', family: 6 });
    await expect(vetUrl(new URL('http://[::ffff:10.20.1.1]/'), policy)).resolves.toMatchObject({ family: 6 });
    await expect(vetUrl(new URL('http://127.0.0.1:8080/'), policy)).rejects.toEqual(err('blocked_address'));
    const seeds: AddressPolicy = { allowPrivateNetworks: false, allowedPrivateOrigins: ['http://127.0.0.1:8080'] };
    await expect(vetUrl(new URL('http://127.0.0.1:8080/docs/'), seeds)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(vetUrl(new URL('http://127.0.0.1:6379/'), seeds)).rejects.toEqual(err('blocked_address'));
  });
});

describe('safeFetch', () => {
  it('refuses loopback by default', async () => {
    await expect(safeFetch(`${server.origin}/page`, { userAgent: UA, respectRobotsTxt: false })).rejects.toEqual(err('blocked_address'));
    await expect(safeFetch(`http://localhost:${server.port}/page`, { userAgent: UA, respectRobotsTxt: false })).rejects.toEqual(
      err('blocked_address'),
    );
    // Numeric host spellings are normalised by the URL parser and then checked.
    for (const host of ['2130706433', '0x7f.1', '017700000001', '[::1]', '[::ffff:127.0.0.1]']) {
      await expect(safeFetch(`http://${host}:${server.port}/page`, { userAgent: UA, respectRobotsTxt: false }), host).rejects.toEqual(
        err('blocked_address'),
      );
    }
    expect(server.hits.filter((h) => h.startsWith('GET /page '))).toHaveLength(0);
  });

  it('refuses a DNS name that resolves to a private address, without connecting', async () => {
    const resolver = async () => [{ address: '127.0.0.1', family: 4 as const }];
    const before = server.hits.length;
    await expect(
      safeFetch(`http://intranet.example:${server.port}/page`, { userAgent: UA, respectRobotsTxt: false, resolver }),
    ).rejects.toEqual(err('blocked_address'));
    expect(server.hits.length).toBe(before);
  });

  it('connects to the vetted address while keeping the name in Host, and sends the crawler User-Agent', async () => {
    const resolver = async () => [{ address: '127.0.0.1', family: 4 as const }];
    const doc = await safeFetch(`http://site.example:${server.port}/echo-host`, {
      userAgent: UA,
      respectRobotsTxt: false,
      resolver,
      allowedPrivateHosts: ['site.example'],
    });
    expect(doc.body).toBe(`host=site.example:${server.port} ua=${UA}`);
  });

  it('checks every redirect: private targets are refused even after an allowed first hop', async () => {
    const firstHopOnly = { userAgent: UA, respectRobotsTxt: false, allowedPrivateHosts: ['127.0.0.1'] };
    for (const path of ['/to-metadata', '/to-localhost', '/to-mapped', '/to-decimal']) {
      await expect(safeFetch(`${server.origin}${path}`, firstHopOnly), path).rejects.toEqual(err('blocked_address'));
    }
    await expect(safeFetch(`${server.origin}/to-ftp`, firstHopOnly)).rejects.toEqual(err('invalid_url'));
  });

  it('follows up to 5 redirects and refuses more', async () => {
    const doc = await safeFetch(`${server.origin}/hop?n=4`, local());
    expect(doc.finalUrl).toBe(`${server.origin}/page`);
    expect(doc.redirects).toHaveLength(5);
    await expect(safeFetch(`${server.origin}/hop?n=5`, local())).rejects.toEqual(err('too_many_redirects'));
    await expect(safeFetch(`${server.origin}/loop`, local())).rejects.toEqual(err('too_many_redirects'));
  });

  it('cuts huge bodies at the cap, compressed ones included', async () => {
    const started = performance.now();
    await expect(safeFetch(`${server.origin}/huge`, local({ maxBytes: 1024 * 1024 }))).rejects.toEqual(err('body_too_large'));
    await expect(safeFetch(`${server.origin}/bomb`, local({ maxBytes: 1024 * 1024 }))).rejects.toEqual(err('body_too_large'));
    expect(performance.now() - started).toBeLessThan(5_000);
    const gz = await safeFetch(`${server.origin}/gzip`, local());
    expect(gz.body).toBe(ARTICLE);
  });

  it('times out slow headers and slow bodies with upstream_timeout', async () => {
    const started = performance.now();
    await expect(safeFetch(`${server.origin}/slow-headers`, local({ totalTimeoutMs: 300 }))).rejects.toEqual(err('upstream_timeout'));
    await expect(safeFetch(`${server.origin}/slow-body`, local({ totalTimeoutMs: 300 }))).rejects.toEqual(err('upstream_timeout'));
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it('reports refused connections as upstream_unreachable', async () => {
    const closed = await startTestServer({});
    const port = closed.port;
    await closed.close();
    await expect(safeFetch(`http://127.0.0.1:${port}/`, local())).rejects.toEqual(err('upstream_unreachable'));
  });

  it('decodes charsets: BOM, then header, then meta, then UTF-8 if valid, else windows-1252', async () => {
    const noHeader = await safeFetch(`${server.origin}/cp1252-no-header`, local());
    expect(noHeader.body).toContain('Café crème “quoted” € 5');
    expect(noHeader.charset).toBe('windows-1252');
    const headerWins = await safeFetch(`${server.origin}/header-vs-meta`, local());
    expect(headerWins.body).toContain('naïve');
    const sjis = await safeFetch(`${server.origin}/meta-shift-jis`, local());
    expect(sjis.body).toContain('日本語');
    expect(sjis.charset).toBe('shift_jis');
    expect((await safeFetch(`${server.origin}/utf8-no-label`, local())).body).toContain('Zürich → 東京');
    expect((await safeFetch(`${server.origin}/bom-beats-header`, local())).body).toContain('façade');
  });

  it('extracts the text of a PDF, typed or sniffed', async () => {
    const doc = await safeFetch(`${server.origin}/doc.pdf`, local());
    expect(doc.kind).toBe('pdf');
    expect(doc.body).toContain('Quarterly report on lock contention.');
    expect(doc.body).toContain('Row locks dominate the waits.');
    expect(doc.pdf?.title).toBe('Lock Report');
    expect((await safeFetch(`${server.origin}/untyped.pdf`, local())).body).toContain('Untyped PDF text.');
  });

  it('accepts text/plain and refuses other types with 415', async () => {
    expect((await safeFetch(`${server.origin}/plain`, local())).kind).toBe('text');
    for (const path of ['/image', '/json']) {
      const failure = await safeFetch(`${server.origin}${path}`, local()).catch((e: unknown) => e);
      expect(failure, path).toEqual(err('unsupported_content_type'));
      expect((failure as { status: number }).status).toBe(415);
    }
  });

  it('returns error statuses with their decoded bodies and the addresses it went through; only 2xx is cached', async () => {
    const cache = new FetchCache<FetchedDocument>(10);
    const missing = await safeFetch(`${server.origin}/missing`, local({ cache, maxAgeS: 60 }));
    expect(missing).toMatchObject({ status: 404, kind: 'html', body: '<p>gone</p>' });
    expect(cache.size).toBe(0);
    const broken = await safeFetch(`${server.origin}/hop?n=1`, local());
    expect(broken.hops.map((h) => [h.status, h.address])).toEqual([[302, '127.0.0.1'], [302, '127.0.0.1'], [200, '127.0.0.1']]);
  });

  it('with private networks allowed, still refuses a redirect to the metadata address, in IPv4 and mapped IPv6 form', async () => {
    const open = local({ connectTimeoutMs: 500, totalTimeoutMs: 2_000 });
    for (const path of ['/to-metadata', '/to-metadata-mapped', '/to-metadata-v6']) {
      await expect(safeFetch(`${server.origin}${path}`, open), path).rejects.toEqual(err('blocked_address'));
    }
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'http://[fd00:ec2::254]/latest/meta-data/']) {
      await expect(safeFetch(url, open), url).rejects.toEqual(err('blocked_address'));
    }
  });

  it('refuses invalid URLs and schemes other than http/https with 400', async () => {
    for (const url of ['', 'not a url', '/relative', 'ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,hi', 'http://user:pw@example.com/']) {
      const failure = await safeFetch(url, local()).catch((e: unknown) => e);
      expect(failure, url).toEqual(err('invalid_url'));
      expect((failure as { status: number }).status).toBe(400);
    }
  });

  it('honours robots.txt for our User-Agent unless told not to', async () => {
    await expect(safeFetch(`${server.origin}/private/page`, local({ respectRobotsTxt: true }))).rejects.toEqual(err('robots_disallowed'));
    expect((await safeFetch(`${server.origin}/page`, local({ respectRobotsTxt: true }))).status).toBe(200);
    expect((await safeFetch(`${server.origin}/private/page`, local({ respectRobotsTxt: false }))).status).toBe(200);
  });

  it('serves from the cache within max_age and fetches again with max_age 0', async () => {
    const cache = new FetchCache<FetchedDocument>(10);
    const first = await safeFetch(`${server.origin}/counted`, local({ cache, maxAgeS: 60 }));
    const second = await safeFetch(`${server.origin}/counted`, local({ cache, maxAgeS: 60 }));
    expect(second.body).toBe(first.body);
    expect(second.fromCache).toBe(true);
    const fresh = await safeFetch(`${server.origin}/counted`, local({ cache, maxAgeS: 0 }));
    expect(fresh.fromCache).toBe(false);
    expect(fresh.body).not.toBe(first.body);
  });
});

describe('robots.txt (RFC 9309) for /v1/extract', () => {
  async function siteWithRobots(robots: Handler): Promise<TestServer> {
    return startTestServer({ '/robots.txt': robots, '/page': html(ARTICLE), '/private/page': html(ARTICLE) });
  }
  const robotsOn = (extra: Partial<SafeFetchOptions> = {}) => local({ respectRobotsTxt: true, ...extra });

  it('reports a dead port and an unresolvable host as upstream_unreachable, not as a robots.txt refusal', async () => {
    const closed = await startTestServer({});
    const port = closed.port;
    await closed.close();
    await expect(safeFetch(`http://127.0.0.1:${port}/page`, robotsOn())).rejects.toEqual(err('upstream_unreachable'));
    const resolver = async () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }));
    await expect(safeFetch('http://nowhere.invalid/page', robotsOn({ resolver }))).rejects.toEqual(err('upstream_unreachable'));
  });

  it('treats a robots.txt answering 5xx or 429 as unreachable (the site is disallowed, retryable), a 404 as allowing everything', async () => {
    for (const status of [500, 503, 429]) {
      const site = await siteWithRobots((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('down');
      });
      try {
        const failure = await safeFetch(`${site.origin}/page`, robotsOn()).catch((e: unknown) => e);
        expect(failure, String(status)).toEqual(expect.objectContaining({ code: 'upstream_unreachable', retryable: true }));
        expect((failure as Error).message).toMatch(new RegExp(`robots.txt answered HTTP ${status}`));
        expect(site.hits.some((h) => h.startsWith('GET /page '))).toBe(false);
      } finally {
        await site.close();
      }
    }
    const missing = await siteWithRobots((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no robots here');
    });
    try {
      expect((await safeFetch(`${missing.origin}/private/page`, robotsOn())).status).toBe(200);
    } finally {
      await missing.close();
    }
  });

  it('follows robots.txt redirects and parses the first 500 KiB of an oversized file instead of refusing the site', async () => {
    const big = await siteWithRobots((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nDisallow: /private\n${'# padding\n'.repeat(80_000)}`);
    });
    const moved = await startTestServer({
      '/robots.txt': (_req, res) => {
        res.writeHead(301, { location: `${big.origin}/robots.txt` });
        res.end();
      },
      '/page': html(ARTICLE),
      '/private/page': html(ARTICLE),
    });
    try {
      expect((await safeFetch(`${big.origin}/page`, robotsOn())).status).toBe(200);
      await expect(safeFetch(`${big.origin}/private/page`, robotsOn())).rejects.toEqual(err('robots_disallowed'));
      await expect(safeFetch(`${moved.origin}/private/page`, robotsOn())).rejects.toEqual(err('robots_disallowed'));
      expect((await safeFetch(`${moved.origin}/page`, robotsOn())).status).toBe(200);
    } finally {
      await big.close();
      await moved.close();
    }
  });
});
