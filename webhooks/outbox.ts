import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { NotaryConfig } from '../core/index.js';
import { BASE62, newId } from '../core/index.js';
import type { Database } from '../storage/index.js';
import type { HostResolver } from '../extract/index.js';
import { postWebhook, type AttemptOutcome } from './deliver.js';
import { disableEndpoint, getEndpoint, registerEndpoint, tenantEndpoint, tenantEndpoints, type WebhookEndpoint } from './endpoints.js';
import { isRetryable, retryDelayMs } from './schedule.js';
import type { DeliveryState } from './tables.js';
import './tables.js';

export interface WebhookSettings {
  /** webhooks.timeout_ms: one attempt. */
  timeoutMs: number;
  /** webhooks.max_attempts: attempts of one message, the first included. */
  maxAttempts: number;
  /** webhooks.allow_private_networks */
  allowPrivateNetworks: boolean;
}

export function webhookSettingsOf(cfg: NotaryConfig): WebhookSettings {
  return { timeoutMs: cfg.webhooks.timeout_ms, maxAttempts: cfg.webhooks.max_attempts, allowPrivateNetworks: cfg.webhooks.allow_private_networks };
}

export interface OutboxOptions {
  /** The time (tests move it); the real clock by default. */
  clock?: () => Date;
  /** [0, 1) for the retry jitter; 0.5 gives the schedule's delays exactly. */
  random?: () => number;
  resolver?: HostResolver;
  /** Messages one deliverDue call claims at most, and how many of them are posted at once. */
  batchSize?: number;
  concurrency?: number;
}

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  status: number | null;
  errorCode: string | null;
  error: string | null;
}

export interface Delivery {
  /** The webhook-id of every attempt. */
  id: string;
  endpointId: string;
  eventType: string;
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due, while pending. */
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface DeliveryFilter {
  endpointId?: string;
  tenantId?: string;
  state?: DeliveryState;
  /** Newest first; 100 by default, at most 1000. */
  limit?: number;
}

export interface DeliverReport {
  /** Messages this call claimed and attempted. */
  attempted: number;
  delivered: number;
  /** Failed for good: not retryable, or max_attempts reached. */
  failed: number;
  retrying: number;
}

/** The message id of an endpoint's message with a caller's key: `msg_` and 20 base62 characters of their SHA-256. */
export function messageIdFor(endpointId: string, key: string): string {
  const digest = createHash('sha256').update(`${endpointId}\n${key}`).digest();
  let out = '';
  for (let i = 0; i < 20; i++) out += BASE62[(digest[i] ?? 0) % 62];
  return `msg_${out}`;
}

/** Extra time a claim lasts beyond one attempt's timeout before another process may take the message over. */
const CLAIM_MARGIN_MS = 30_000;

/**
 * The webhook outbox: messages are rows, attempted when due by whichever process calls deliverDue (a row is claimed
 * with a conditional UPDATE, so two processes never post the same attempt), retried per the schedule, kept with
 * their attempts so retries survive restarts and deliveries can be listed.
 */
export class WebhookOutbox {
  private readonly clock: () => Date;
  private readonly random: () => number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly settings: WebhookSettings,
    private readonly options: OutboxOptions = {},
  ) {
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? Math.random;
  }

  private addressSettings(): { allowPrivateNetworks: boolean; resolver?: HostResolver } {
    return { allowPrivateNetworks: this.settings.allowPrivateNetworks, ...(this.options.resolver ? { resolver: this.options.resolver } : {}) };
  }

  /** Registers an endpoint (see registerEndpoint): refused addresses are webhook_address_blocked. */
  registerEndpoint(input: { url: unknown; tenantId?: string | null }): Promise<WebhookEndpoint> {
    return registerEndpoint(this.db, this.addressSettings(), input, this.clock());
  }

  /** A tenant's enabled endpoint, or webhook_not_found (also for another tenant's). */
  endpointOf(id: string, tenantId: string): Promise<WebhookEndpoint> {
    return tenantEndpoint(this.db, id, tenantId);
  }

  /** A tenant's enabled endpoints, oldest first. */
  listEndpoints(tenantId: string): Promise<WebhookEndpoint[]> {
    return tenantEndpoints(this.db, tenantId);
  }

  /** Disables a tenant's endpoint (webhook_not_found when it is not one); its pending messages fail. */
  deleteEndpoint(id: string, tenantId: string): Promise<void> {
    return disableEndpoint(this.db, id, tenantId, this.clock());
  }

  /**
   * Queues one message for an endpoint (its id, or webhook_not_found), due at once. The body is the Standard
   * Webhooks envelope `{"type", "timestamp", "data"}`; the returned id is its webhook-id. With `key`, the message id
   * is derived from the endpoint and the key, and a second enqueue with them (a caller retrying after a crash) adds
   * nothing: `created` is false and the first message stands.
   */
  async enqueue(endpoint: string | { id: string }, eventType: string, payload: unknown, options: { key?: string } = {}): Promise<{ id: string; created: boolean }> {
    const target = await getEndpoint(this.db, typeof endpoint === 'string' ? endpoint : endpoint.id);
    const now = this.clock().toISOString();
    const id = options.key === undefined ? newId('msg') : messageIdFor(target.id, options.key);
    const body = JSON.stringify({ type: eventType, timestamp: now, data: payload });
    const inserted = await this.db
      .insertInto('webhook_messages')
      .values({
        id,
        endpoint_id: target.id,
        event_type: eventType,
        payload: body,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        claim_token: null,
        claimed_until: null,
        last_status: null,
        last_error: null,
        created_at: now,
        finished_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return { id, created: Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1 };
  }

  /** Attempts every message due at `now` that this call manages to claim; once `signal` aborts, claims no more. */
  async deliverDue(now: Date = this.clock(), signal?: AbortSignal): Promise<DeliverReport> {
    return this.deliver(await this.dueIds(now), now, signal);
  }

  /** Ids of messages due at `now`, oldest due first (at most batchSize); another process may claim them first. */
  async dueIds(now: Date = this.clock()): Promise<string[]> {
    const at = now.toISOString();
    const due = await this.db
      .selectFrom('webhook_messages')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('state', '=', 'pending'), eb('next_attempt_at', '<=', at)]),
          eb.and([eb('state', '=', 'delivering'), eb('claimed_until', '<=', at)]),
        ]),
      )
      .orderBy('next_attempt_at')
      .limit(this.options.batchSize ?? 50)
      .execute();
    return due.map((row) => row.id);
  }

  /**
   * Claims each of these messages that is still due at `now` (one conditional UPDATE each: of processes that listed
   * the same message, one claims it; one that listed it before another delivered it claims nothing) and attempts
   * those it claimed. Each is claimed right before its attempt, so a claim's lease covers one attempt, not a queue.
   */
  async deliver(ids: readonly string[], now: Date = this.clock(), signal?: AbortSignal): Promise<DeliverReport> {
    const report: DeliverReport = { attempted: 0, delivered: 0, failed: 0, retrying: 0 };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length && signal?.aborted !== true) {
        const id = ids[next++];
        if (id === undefined) break;
        const token = randomBytes(12).toString('hex');
        if (!(await this.claim(id, token, now))) continue;
        const state = await this.attempt(id, token, now);
        if (!state) continue;
        report.attempted++;
        if (state === 'delivered') report.delivered++;
        else if (state === 'failed') report.failed++;
        else report.retrying++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 8, ids.length) }, () => worker()));
    return report;
  }

  /** Takes a due message for this call: one conditional UPDATE, so only one claimer of a message wins. */
  private async claim(id: string, token: string, now: Date): Promise<boolean> {
    const at = now.toISOString();
    const until = new Date(now.getTime() + this.settings.timeoutMs + CLAIM_MARGIN_MS).toISOString();
    const result = await this.db
      .updateTable('webhook_messages')
      .set({ state: 'delivering', claim_token: token, claimed_until: until })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb.and([eb('state', '=', 'pending'), eb('next_attempt_at', '<=', at)]),
          eb.and([eb('state', '=', 'delivering'), eb('claimed_until', '<=', at)]),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Posts one claimed message and records the attempt; null when the claim was lost meanwhile. */
  private async attempt(id: string, token: string, now: Date): Promise<DeliveryState | null> {
    const row = await this.db
      .selectFrom('webhook_messages')
      .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_messages.endpoint_id')
      .select(['webhook_messages.payload', 'webhook_messages.attempts', 'webhook_endpoints.url', 'webhook_endpoints.secret'])
      .where('webhook_messages.id', '=', id)
      .where('webhook_messages.claim_token', '=', token)
      .executeTakeFirst();
    if (!row) return null;
    const signature = new Webhook(row.secret).sign(id, now, row.payload);
    const outcome = await postWebhook({
      ...this.addressSettings(),
      url: row.url,
      body: row.payload,
      timeoutMs: this.settings.timeoutMs,
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
        'user-agent': 'notary-webhooks',
      },
    });
    return this.record(id, token, row.attempts + 1, now, outcome);
  }

  private async record(id: string, token: string, attempt: number, now: Date, outcome: AttemptOutcome): Promise<DeliveryState | null> {
    const finished = new Date(now.getTime() + outcome.durationMs);
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const state: DeliveryState = ok ? 'delivered' : isRetryable(outcome) && attempt < this.settings.maxAttempts ? 'pending' : 'failed';
    const nextAt = state === 'pending' ? new Date(finished.getTime() + retryDelayMs(attempt, this.random)).toISOString() : finished.toISOString();
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_messages')
        .set({
          state,
          attempts: attempt,
          next_attempt_at: nextAt,
          claim_token: null,
          claimed_until: null,
          last_status: outcome.status,
          last_error: outcome.error,
          finished_at: state === 'pending' ? null : finished.toISOString(),
        })
        .where('id', '=', id)
        .where('claim_token', '=', token)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return null;
      await trx
        .insertInto('webhook_attempts')
        .values({
          message_id: id,
          attempt,
          started_at: now.toISOString(),
          duration_ms: outcome.durationMs,
          status: outcome.status,
          error_code: outcome.errorCode,
          error: outcome.error,
        })
        .execute();
      return state;
    });
  }

  /** Deliveries (messages with their attempts), newest first. */
  async listDeliveries(filter: DeliveryFilter = {}): Promise<Delivery[]> {
    let query = this.db
      .selectFrom('webhook_messages')
      .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_messages.endpoint_id')
      .selectAll('webhook_messages');
    if (filter.endpointId) query = query.where('webhook_messages.endpoint_id', '=', filter.endpointId);
    if (filter.tenantId) query = query.where('webhook_endpoints.tenant_id', '=', filter.tenantId);
    if (filter.state) query = query.where('webhook_messages.state', '=', filter.state);
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
    const rows = await query.orderBy('webhook_messages.created_at', 'desc').orderBy('webhook_messages.id').limit(limit).execute();
    const ids = rows.map((r) => r.id);
    const attempts = ids.length
      ? await this.db.selectFrom('webhook_attempts').selectAll().where('message_id', 'in', ids).orderBy('message_id').orderBy('attempt').execute()
      : [];
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      eventType: r.event_type,
      state: r.state,
      attempts: attempts
        .filter((a) => a.message_id === r.id)
        .map((a) => ({ attempt: a.attempt, startedAt: a.started_at, durationMs: a.duration_ms, status: a.status, errorCode: a.error_code, error: a.error })),
      nextAttemptAt: r.state === 'pending' ? r.next_attempt_at : null,
      lastStatus: r.last_status,
      lastError: r.last_error,
      createdAt: r.created_at,
      finishedAt: r.finished_at,
    }));
  }
}
