import { describe, expect, it } from 'vitest';
import { configSchema } from '../core/config.js';
import { atomicToDecimal, decimalToAtomic, Pricing } from './pricing.js';

const pricing = (input: object = {}) => new Pricing(configSchema.parse({ pricing: input }).pricing);

describe('Pricing', () => {
  it('prices search by depth (past the table: its last entry) and extract by render, before any work', () => {
    const p = pricing({ search: { credits_by_depth: [1, 3] }, extract: { credits: 2, credits_rendered: 5 } });
    expect(p.price({ operation: 'search', depth: 1 })).toMatchObject({ credits: 1, description: 'search depth 1', claim: 'search_call_consumed' });
    expect(p.price({ operation: 'search', depth: 2 }).credits).toBe(3);
    expect(p.price({ operation: 'search', depth: 7 }).credits).toBe(3);
    expect(p.price({ operation: 'extract', render: 'never' })).toMatchObject({ credits: 2, description: 'extract', claim: 'extract_call_consumed' });
    // "auto" renders JS shells at the static price: the quote is never exceeded.
    expect(p.price({ operation: 'extract', render: 'auto' }).credits).toBe(2);
    expect(p.price({ operation: 'extract', render: 'always' })).toMatchObject({ credits: 5, description: 'extract rendered' });
    expect(() => p.price({ operation: 'search', depth: 0 })).toThrow(RangeError);
  });

  it('quotes a batch per URL and charges part of it for the URLs delivered, never more than the quote', () => {
    const p = pricing({ extract: { credits: 2, credits_rendered: 5 }, credit_price: { amount: '0.001' } });
    const quote = p.price({ operation: 'extract', render: 'auto', urls: 20 });
    expect(quote).toMatchObject({ credits: 40, units: 20, description: 'extract, 20 URLs', amount: { decimal: '0.04' } });
    expect(p.price({ operation: 'extract', render: 'always', urls: 3 })).toMatchObject({ credits: 15, units: 3, description: 'extract rendered, 3 URLs' });
    expect(p.partOf(quote, 14)).toMatchObject({ credits: 28, units: 14, description: 'extract, 14 of 20 URLs', amount: { decimal: '0.028', atomic: 28_000n } });
    expect(p.partOf(quote, 20)).toBe(quote);
    for (const units of [0, 21, 1.5]) expect(() => p.partOf(quote, units)).toThrow(RangeError);
    // A one-URL call and every search are one unit, never split.
    expect(p.price({ operation: 'extract', render: 'never' }).units).toBe(1);
    expect(() => p.partOf(p.price({ operation: 'search', depth: 1 }), 0)).toThrow(RangeError);
    expect(() => p.price({ operation: 'extract', render: 'auto', urls: 0 })).toThrow(RangeError);
  });

  it('adds the cross-encoder surcharge to exactly the depths the cross-encoder serves, as the service runs now', () => {
    let from: number | null = null;
    const config = configSchema.parse({ pricing: { search: { credits_by_depth: [1, 1, 2] } } }).pricing;
    expect(config.search.cross_encoder_credits).toBe(40);
    const p = new Pricing(config, { crossEncoderFrom: () => from });
    // No cross-encoder loaded (lexical fallback, bi-encoder only): the passes' price, nothing for a model that does not run.
    expect([1, 2, 3].map((depth) => p.price({ operation: 'search', depth }).credits)).toEqual([1, 1, 2]);
    from = 2;
    expect([1, 2, 3, 9].map((depth) => p.price({ operation: 'search', depth }).credits)).toEqual([1, 41, 42, 42]);
    expect(p.price({ operation: 'search', depth: 2 })).toMatchObject({ description: 'search depth 2 (cross-encoder)', amount: { decimal: '0.041' } });
    expect(p.table(3).map((row) => `${row.call}: ${row.credits}`).slice(0, 3)).toEqual(['search depth 1: 1', 'search depth 2 (cross-encoder): 41', 'search depth 3 (cross-encoder): 42']);
    from = 1;
    expect(p.price({ operation: 'search', depth: 1 }).credits).toBe(41);
    expect(p.price({ operation: 'extract', render: 'always' }).credits).toBe(2);
    const free = new Pricing(configSchema.parse({ pricing: { search: { cross_encoder_credits: 0 } } }).pricing, { crossEncoderFrom: () => 2 });
    expect(free.price({ operation: 'search', depth: 2 }).credits).toBe(1);
  });

  it('turns credits into exact money amounts of the configured asset', () => {
    const p = pricing({ credit_price: { amount: '0.0015', asset: 'USDC', decimals: 6 } });
    expect(p.price({ operation: 'search', depth: 3 }).amount).toEqual({ atomic: 3000n, decimal: '0.003', asset: 'USDC', decimals: 6 });
    expect(p.amountFor(1_000_000).decimal).toBe('1500');
    const wei = pricing({ credit_price: { amount: '0.000000000000000001', asset: 'ETH', decimals: 18 } });
    expect(wei.amountFor(3).atomic).toBe(3n);
    expect(pricing().table(2)).toEqual([
      { call: 'search depth 1', credits: 1, amount: '0.001 USDC' },
      { call: 'search depth 2', credits: 1, amount: '0.001 USDC' },
      { call: 'extract (render never or auto)', credits: 1, amount: '0.001 USDC' },
      { call: 'extract (render always)', credits: 2, amount: '0.002 USDC' },
      { call: 'map (one page of URLs)', credits: 1, amount: '0.001 USDC' },
      { call: 'crawl job (per stored page)', credits: 1, amount: '0.001 USDC' },
    ]);
    expect(pricing({ map: { credits: 3 } }).price({ operation: 'map' })).toMatchObject({ credits: 3, features: ['map'], claim: 'map_call_consumed' });
  });

  it('parses and writes decimals exactly, refusing more places than the asset has', () => {
    expect(decimalToAtomic('0.1', 6)).toBe(100_000n);
    expect(decimalToAtomic('12.340000', 6)).toBe(12_340_000n);
    expect(decimalToAtomic('0', 6)).toBe(0n);
    expect(decimalToAtomic('123456789012345678901234567890', 0)).toBe(123456789012345678901234567890n);
    expect(() => decimalToAtomic('0.0000001', 6)).toThrow(/more than 6 decimal places/);
    expect(() => decimalToAtomic('1e-3', 6)).toThrow(/not a decimal/);
    expect(() => decimalToAtomic('-1', 6)).toThrow(/not a decimal/);
    expect(atomicToDecimal(1500n, 6)).toBe('0.0015');
    expect(atomicToDecimal(2_000_000n, 6)).toBe('2');
    expect(atomicToDecimal(0n, 6)).toBe('0');
    // 0.1 + 0.2 in floats is not 0.3; in smallest units it is.
    expect(atomicToDecimal(decimalToAtomic('0.1', 6) + decimalToAtomic('0.2', 6), 6)).toBe('0.3');
  });
});
