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
  it('keeps to the seed hosts by default', () => {
    const scope = compileScope(seeds, { sameHost: true, include: [], exclude: [] });
    expect(scope.check('http://a.test/x')).toBeNull();
    expect(scope.check('http://b.test/x')).toBe('other host');
  });

  it('lets include patterns decide, and exclude always wins', () => {
    const scope = compileScope(seeds, { sameHost: true, include: ['^http://a\\.test/docs/', '^http://b\\.test/'], exclude: ['\\.zip$'] });
    expect(scope.check('http://a.test/docs/1')).toBeNull();
    expect(scope.check('http://b.test/anything')).toBeNull();
    expect(scope.check('http://a.test/blog/1')).toBe('matches no include pattern');
    expect(scope.check('http://a.test/docs/f.zip')).toBe('matches exclude \\.zip$');
  });

  it('reports a bad pattern as invalid_config', () => {
    expect(() => compileScope(seeds, { sameHost: true, include: ['('], exclude: [] })).toThrow(
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
