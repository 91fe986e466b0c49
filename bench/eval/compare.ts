import ttest from '@stdlib/stats-ttest';

/** One row against another on one metric, query by query. */
export interface PairedComparison {
  metric: string;
  baseline: string;
  candidate: string;
  baseline_mean: number;
  candidate_mean: number;
  /** candidate - baseline, mean over the queries. */
  difference: number;
  /** 95% confidence interval of the difference (paired t). */
  ci_95: [number, number];
  /** Queries where the candidate scores higher / lower / the same. */
  wins: number;
  losses: number;
  ties: number;
  /** Two-sided paired t-test; 1 when every query ties. */
  p_value: number;
}

export function pairedComparison(
  metric: string,
  baseline: { name: string; scores: readonly number[] },
  candidate: { name: string; scores: readonly number[] },
): PairedComparison {
  const a = baseline.scores;
  const b = candidate.scores;
  if (a.length !== b.length || a.length < 2) {
    throw new RangeError(`paired comparison needs two equal lists of at least 2 scores (got ${a.length} and ${b.length})`);
  }
  const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
  let wins = 0;
  let losses = 0;
  const diffs = b.map((x, i) => {
    const d = x - (a[i] as number);
    if (d > 1e-12) wins++;
    else if (d < -1e-12) losses++;
    return d;
  });
  const ties = a.length - wins - losses;
  const difference = mean(diffs);
  let pValue = 1;
  let ci: [number, number] = [difference, difference];
  if (diffs.some((d) => Math.abs(d - difference) > 1e-12)) {
    const test = ttest([...b], [...a]);
    pValue = test.pValue;
    ci = [test.ci[0] ?? difference, test.ci[1] ?? difference];
  }
  return {
    metric,
    baseline: baseline.name,
    candidate: candidate.name,
    baseline_mean: mean(a),
    candidate_mean: mean(b),
    difference,
    ci_95: ci,
    wins,
    losses,
    ties,
    p_value: pValue,
  };
}

/** What compareReports reads of a relevance report: per set, the query ids and each row's per-query metrics. */
export interface ReportForComparison {
  sets: Partial<Record<string, { query_ids?: readonly string[]; rows: Partial<Record<string, { per_query?: Partial<Record<string, readonly number[]>> }>> }>>;
}

export interface ReportComparison extends PairedComparison {
  set: string;
  row: string;
}

/**
 * Every row of every set found in both reports, before against after, query by query on each metric (paired t-test).
 * Reports whose query lists differ for a set are refused: pairing needs the same queries in the same order.
 */
export function compareReports(before: ReportForComparison, after: ReportForComparison, metrics: readonly string[]): ReportComparison[] {
  const out: ReportComparison[] = [];
  for (const [set, a] of Object.entries(before.sets)) {
    const b = after.sets[set];
    if (!a || !b) continue;
    if (!a.query_ids || !b.query_ids) throw new RangeError(`set ${set}: a report has no query_ids (made before per-query metrics were written)`);
    if (a.query_ids.join('\u0000') !== b.query_ids.join('\u0000')) throw new RangeError(`set ${set}: the two reports searched different queries`);
    for (const [row, ra] of Object.entries(a.rows)) {
      const rb = b.rows[row];
      for (const metric of metrics) {
        const sa = ra?.per_query?.[metric];
        const sb = rb?.per_query?.[metric];
        if (!sa || !sb) continue;
        out.push({ set, row, ...pairedComparison(metric, { name: 'before', scores: sa }, { name: 'after', scores: sb }) });
      }
    }
  }
  return out;
}
