import { describe, expect, it } from 'vitest';
import { checkCollectionSettings, collectionSettingsOf, parseMaxDepthOption, parsePricesOption } from './collections.js';

describe("a collection's own settings", () => {
  it('parses --prices and --max-depth, "default" meaning the deployment’s', () => {
    expect(parsePricesOption('1, 2,4')).toEqual([1, 2, 4]);
    expect(parsePricesOption('default')).toBeNull();
    expect(() => parsePricesOption('1,x')).toThrow(/comma-separated/);
    expect(() => parsePricesOption('1.5')).toThrow(/whole credits/);
    expect(parseMaxDepthOption('2')).toBe(2);
    expect(parseMaxDepthOption('default')).toBeNull();
    expect(() => parseMaxDepthOption('two')).toThrow(/whole number/);
  });

  it('checks prices (1 to 10 whole credits) and the maximum depth (1 to search.max_depth)', () => {
    expect(() => checkCollectionSettings({ creditsByDepth: [1, 2], maxDepth: 3 }, 3)).not.toThrow();
    expect(() => checkCollectionSettings({ creditsByDepth: null, maxDepth: null }, 3)).not.toThrow();
    expect(() => checkCollectionSettings({ creditsByDepth: [] }, 3)).toThrow(/1 to 10 whole numbers/);
    expect(() => checkCollectionSettings({ creditsByDepth: new Array(11).fill(1) as number[] }, 3)).toThrow(/1 to 10/);
    expect(() => checkCollectionSettings({ creditsByDepth: [-1] }, 3)).toThrow(/from 0/);
    expect(() => checkCollectionSettings({ maxDepth: 4 }, 3)).toThrow(/from 1 to 3 \(search.max_depth\)/);
    expect(() => checkCollectionSettings({ maxDepth: 0 }, 3)).toThrow(/from 1 to 3/);
  });

  it('reads stored settings; an unreadable price list falls back to the price list’s', () => {
    expect(collectionSettingsOf({ credits_by_depth: '[3,7]', max_depth: 2 })).toEqual({ creditsByDepth: [3, 7], maxDepth: 2 });
    expect(collectionSettingsOf({ credits_by_depth: null, max_depth: null })).toEqual({ creditsByDepth: null, maxDepth: null });
    for (const bad of ['{', '[]', '[-1]', '"x"', '[1.5]']) expect(collectionSettingsOf({ credits_by_depth: bad, max_depth: null }).creditsByDepth).toBeNull();
  });
});
