import { describe, expect, it } from 'vitest';
import { HostGate } from './host-gate.js';
import { compileScope, normaliseUrl } from './url.js';

describe('normaliseUrl', () => {
  it('drops fragments and default ports, lower-cases the host, keeps path and query as written', () => {
    expect(normaliseUrl('HTTP://Example.COM:80/A/b?z=1&a=2#frag')).toBe('http://example.com/A/b?z=1&a=2');
    expect(normaliseUrl('https://example.com:443')).toBe('https://example.com/');
    expect(normaliseUrl('https://example.com:8443/x')).toBe('https://example.com:8443/x');
    expect(normaliseUrl('../c.html#x', 'http://h.test/a/b/')).toBe('http://h.test/a/c.html');
  });

  it('rejects non-http(s) and malformed URLs', () => {
    expect(normaliseUrl('mailto:someone@example.com')).toBeNull();
    expect(normaliseUrl('javascript:void(0)', 'http://h.test/')).toBeNull();
    expect(normaliseUrl('not a url')).toBeNull();
  });
});

describe('compileScope', () => {
  const seeds = ['http://a.test/'];
  it('path scope: under the seed folder, the whole host for a root seed', () => {
    const root = compileScope(seeds, { scope: 'path', include: [], exclude: [] });
    expect(root.check('http://a.test/x')).toBeNull();
    expect(root.check('http://b.test/x')).toBe('other host');
    const folder = compileScope(['http://a.test/docs/en/index.html', 'http://c.test/fr/'], { scope: 'path', include: [], exclude: [] });
    expect(folder.check('http://a.test/docs/en/intro.html')).toBeNull();
    expect(folder.check('http://a.test/docs/en/sub/deep.html?x=1')).toBeNull();
    expect(folder.check('http://c.test/fr/page')).toBeNull();
    expect(folder.check('http://a.test/docs/de/intro.html')).toBe('outside /docs/en/ /fr/');
    expect(folder.check('http://a.test/docs/english.html')).toBe('outside /docs/en/ /fr/');
    expect(folder.check('http://c.test/en/page')).toBe('outside /docs/en/ /fr/');
    expect(folder.check('http://d.test/docs/en/x')).toBe('other host');
    expect(folder.description).toBe('scope path: under http://a.test/docs/en/ http://c.test/fr/');
  });

  it('host, domain and any scopes', () => {
    const host = compileScope(['https://docs.example.co.uk/en/'], { scope: 'host', include: [], exclude: [] });
    expect(host.check('https://docs.example.co.uk/fr/')).toBeNull();
    expect(host.check('https://www.example.co.uk/')).toBe('other host');
    const domain = compileScope(['https://docs.example.co.uk/en/'], { scope: 'domain', include: [], exclude: [] });
    expect(domain.check('https://www.example.co.uk/blog')).toBeNull();
    expect(domain.check('https://example.co.uk/')).toBeNull();
    expect(domain.check('https://other.co.uk/')).toBe('other domain');
    const ip = compileScope(['http://127.0.0.1:8080/'], { scope: 'domain', include: [], exclude: [] });
    expect(ip.check('http://127.0.0.1:9090/x')).toBeNull();
    expect(ip.check('http://127.0.0.2/x')).toBe('other domain');
    expect(compileScope(seeds, { scope: 'any', include: [], exclude: [] }).check('http://z.test/')).toBeNull();
  });

  it('include patterns narrow the scope, and exclude always wins', () => {
    const scope = compileScope(seeds, { scope: 'host', include: ['^http://a\\.test/docs/', '^http://b\\.test/'], exclude: ['\\.zip$'] });
    expect(scope.check('http://a.test/docs/1')).toBeNull();
    expect(scope.check('http://b.test/anything')).toBe('other host');
    expect(scope.check('http://a.test/blog/1')).toBe('matches no include pattern');
    expect(scope.check('http://a.test/docs/f.zip')).toBe('matches exclude \\.zip$');
  });

  it('reports a bad pattern as invalid_config', () => {
    expect(() => compileScope(seeds, { scope: 'path', include: ['('], exclude: [] })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
  });
});

describe('HostGate', () => {
  it('limits requests in flight per host and spaces their starts', async () => {
    const gate = new HostGate(2, 50);
    let inFlight = 0;
    let maxInFlight = 0;
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        const release = await gate.acquire('h.test');
        starts.push(Date.now());
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 120));
        inFlight--;
        release();
      }),
    );
    expect(maxInFlight).toBe(2);
    starts.sort((a, b) => a - b);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(45);
  });
});
