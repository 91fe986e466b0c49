import type { UsageBucket } from '../../storage/index.js';
import { atomicToDecimal } from '../../payments/index.js';

export interface UsageSeries {
  key: string;
  calls: number[];
  credits: number[];
}

/** Buckets turned into one dense series per key (a value for every day, zeros included) with totals, for charts. */
export function usageSeries(days: string[], buckets: readonly UsageBucket[]): { days: string[]; series: UsageSeries[]; totals: { calls: number; credits: number } } {
  const index = new Map(days.map((day, i) => [day, i]));
  const byKey = new Map<string, UsageSeries>();
  let calls = 0;
  let credits = 0;
  for (const bucket of buckets) {
    const at = index.get(bucket.day);
    if (at === undefined) continue;
    let series = byKey.get(bucket.key);
    if (!series) {
      series = { key: bucket.key, calls: days.map(() => 0), credits: days.map(() => 0) };
      byKey.set(bucket.key, series);
    }
    series.calls[at] = (series.calls[at] ?? 0) + bucket.calls;
    series.credits[at] = (series.credits[at] ?? 0) + bucket.credits;
    calls += bucket.calls;
    credits += bucket.credits;
  }
  return { days, series: [...byKey.values()].sort((a, b) => a.key.localeCompare(b.key, 'en', { numeric: true })), totals: { calls, credits } };
}

/** Money per day and mode, exact (bigint sums of smallest units), written as decimals of the asset. */
export function revenueSeries(days: string[], buckets: readonly UsageBucket[], decimals: number) {
  const index = new Map(days.map((day, i) => [day, i]));
  const rows = new Map<string, { mode: string; asset: string; calls: number[]; credits: number[]; amount: bigint[] }>();
  for (const bucket of buckets) {
    const at = index.get(bucket.day);
    if (at === undefined) continue;
    const id = `${bucket.key}\u0000${bucket.asset}`;
    let row = rows.get(id);
    if (!row) {
      row = { mode: bucket.key, asset: bucket.asset, calls: days.map(() => 0), credits: days.map(() => 0), amount: days.map(() => 0n) };
      rows.set(id, row);
    }
    row.calls[at] = (row.calls[at] ?? 0) + bucket.calls;
    row.credits[at] = (row.credits[at] ?? 0) + bucket.credits;
    row.amount[at] = (row.amount[at] ?? 0n) + BigInt(bucket.amount);
  }
  return [...rows.values()].map((row) => {
    const total = row.amount.reduce((sum, value) => sum + value, 0n);
    return {
      mode: row.mode,
      asset: row.asset,
      calls: row.calls,
      credits: row.credits,
      amount: row.amount.map((value) => atomicToDecimal(value, decimals)),
      total_calls: row.calls.reduce((a, b) => a + b, 0),
      total_credits: row.credits.reduce((a, b) => a + b, 0),
      total_amount: atomicToDecimal(total, decimals),
    };
  });
}
