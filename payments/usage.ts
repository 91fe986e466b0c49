import type { Insertable } from 'kysely';
import type { UsageEventsTable, UsageRepository } from '../storage/index.js';

/** One served paid call. */
export interface UsageRecord {
  at: string;
  tenantId: string | null;
  keyId: string | null;
  payer: string;
  mode: string;
  environment: 'live' | 'test';
  operation: string;
  depth: number | null;
  render: string | null;
  credits: number;
  /** Smallest units of the asset, a decimal string. */
  amount: string;
  asset: string;
  requestId: string;
}

export interface UsageRecorder {
  record(event: UsageRecord): Promise<void>;
  /**
   * The recorder writes the service database's usage_events table: a payment mode that settles in one transaction
   * of that database may write the call's row there itself (SettleContext.usage, Settlement.usageRecorded), one
   * commit a paid call instead of two.
   */
  readonly inServiceDatabase?: boolean;
}

/** The usage_events row of a call. */
export function usageRow(event: UsageRecord): Insertable<UsageEventsTable> {
  return {
    created_at: event.at,
    tenant_id: event.tenantId,
    key_id: event.keyId,
    payer: event.payer,
    mode: event.mode,
    environment: event.environment,
    operation: event.operation,
    depth: event.depth,
    render: event.render,
    credits: event.credits,
    amount: event.amount,
    asset: event.asset,
    request_id: event.requestId,
  };
}

/** Usage kept in the database (usage_events), one row per served call. */
export class SqlUsageRecorder implements UsageRecorder {
  readonly inServiceDatabase = true;

  constructor(private readonly repository: UsageRepository) {}

  async record(event: UsageRecord): Promise<void> {
    await this.repository.insert(usageRow(event));
  }
}
