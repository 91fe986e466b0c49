import { stringify } from 'csv-stringify/sync';
import type { NotaryConfig } from '../core/index.js';
import { Runtime, type PaymentListRow } from '../runtime/index.js';

const COLUMNS: ReadonlyArray<keyof PaymentListRow> = ['created_at', 'mode', 'payer', 'amount', 'asset', 'network', 'transaction', 'credits', 'request_id'];

/** `notary payments list`: the books, one row per charged call. */
export async function paymentsListCommand(cfg: NotaryConfig, opts: { mode?: string; csv?: boolean; json?: boolean; limit?: number }): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const rows = await ctx.paymentsList({ ...(opts.mode ? { mode: opts.mode } : {}), ...(opts.limit !== undefined ? { limit: opts.limit } : {}) });
    if (opts.csv) {
      process.stdout.write(stringify(rows.map((r) => COLUMNS.map((c) => r[c] ?? '')), { header: true, columns: [...COLUMNS] }));
      return;
    }
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write('no payments\n');
      return;
    }
    for (const r of rows) {
      const where = r.transaction ? `  ${r.network} ${r.transaction}` : '';
      process.stdout.write(`${r.created_at}  ${r.mode.padEnd(7)} ${r.payer}  ${r.amount} ${r.asset}  ${r.credits} credits  ${r.request_id ?? ''}${where}\n`);
    }
  } finally {
    await ctx.close();
  }
}

/** `notary payments reconcile`: decides settlements whose outcome was never heard, from the chain. */
export async function paymentsReconcileCommand(cfg: NotaryConfig, opts: { json?: boolean }): Promise<void> {
  const ctx = await Runtime.open(cfg);
  try {
    const summary = await ctx.reconcilePayments();
    process.stdout.write(
      opts.json
        ? `${JSON.stringify(summary)}\n`
        : `checked ${summary.checked}: ${summary.settled} settled, ${summary.released} released (never charged), ${summary.pending} still pending\n${(summary.unreachable ?? []).map((why) => `stopped: ${why}\n`).join('')}`,
    );
  } finally {
    await ctx.close();
  }
}
