import { describe, expect, it } from 'vitest';
import { compileScope } from './url.js';
import { compileUrlPattern, urlPatternProblem } from './url-pattern.js';

describe('crawl URL patterns (RE2)', () => {
  it('match as RegExp.test does: unanchored, with anchors when asked', () => {
    const print = compileUrlPattern('\\?print=1$');
    expect(print.test('https://example.org/a?print=1')).toBe(true);
    expect(print.test('https://example.org/a?print=12')).toBe(false);
    expect(compileUrlPattern('/docs/').test('https://example.org/docs/x')).toBe(true);
    expect(compileUrlPattern('^https://example\\.org/(en|fr)/').test('https://example.org/de/x')).toBe(false);
  });

  it('refuse lookaround, backreferences and bad syntax, saying which syntax patterns use', () => {
    for (const pattern of ['(?=docs)', '(?<!x)y', '(a)\\1', '[unclosed']) {
      const problem = urlPatternProblem(pattern);
      expect(problem, pattern).toContain('RE2 syntax');
    }
    expect(urlPatternProblem('^/blog/\\d{4}/')).toBeNull();
  });

  it('take linear time on a pattern that makes a backtracking engine run for ever', () => {
    // With RegExp, (a+)+$ against 30 "a"s and a "!" takes tens of seconds (about 2^30 steps); this test would time out.
    const url = `https://example.org/${'a'.repeat(5_000)}!`;
    expect(compileUrlPattern('(a+)+$').test(url)).toBe(false);
    const scope = compileScope(['https://example.org/'], { scope: 'host', include: ['(a|aa)+$'], exclude: ['(x+x+)+y'] });
    expect(scope.check(url)).toBe('matches no include pattern');
  });
});
