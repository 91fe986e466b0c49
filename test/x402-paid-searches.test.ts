import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runPaidSearches,
  startListeningApi,
  startX402Stack,
  x402ApiConfig,
  type ChainWorld,
  type ListeningApi,
  type RunningFacilitator,
  type X402Stack,
} from '../testkit/x402.js';

/** The must-show: 200 paid searches on the local chain, and the books against the chain. */
describe('200 paid searches on the local chain', () => {
  let stack: X402Stack;
  let dir: string;
  let world: ChainWorld;
  let facilitator: RunningFacilitator;
  let api: ListeningApi;

  beforeAll(async () => {
    stack = await startX402Stack('x402-200', { payers: 4 });
    ({ dir, world, facilitator } = stack);
    api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator));
  });
  afterAll(async () => {
    await api?.close();
    await stack?.close();
  });

  it('payTo grows by exactly the sum of the quoted prices, and the ledger matches the Transfer events one to one', async () => {
    const report = await runPaidSearches(world, api, { searches: 200, payers: world.payers });
    expect(report.served).toBe(200);
    // Depth 1 and 2 alternate: 100 x 0.001 + 100 x 0.002 USDC.
    expect(report.quoted_atomic).toBe('300000');
    expect(report.pay_to_growth_atomic).toBe(report.quoted_atomic);
    expect(report.payers_spent_atomic).toBe(report.quoted_atomic);
    expect(report.ledger_rows).toBe(200);
    expect(report.transfer_events).toBe(200);
    expect(report.matched_one_to_one).toBe(200);
  });
});
