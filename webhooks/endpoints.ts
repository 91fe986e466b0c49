import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { NotaryError, newId } from '../core/index.js';
import type { Database } from '../storage/index.js';
import { checkWebhookUrl, type WebhookAddressSettings } from './address.js';
import './tables.js';

export interface WebhookEndpoint {
  id: string;
  tenantId: string | null;
  url: string;
  /** `whsec_...`: the receiver verifies signatures with it (shown to the tenant once, at registration). */
  secret: string;
  createdAt: string;
}

/** A new signing secret: `whsec_` and the base64 of 24 random bytes, as Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Registers a tenant's endpoint: the URL must be absolute http(s) (invalid_url) and must not resolve to a refused
 * address (webhook_address_blocked, 422); each delivery checks the address again.
 */
export async function registerEndpoint(
  db: Kysely<Database>,
  settings: WebhookAddressSettings,
  input: { url: unknown; tenantId?: string | null },
  now: Date = new Date(),
): Promise<WebhookEndpoint> {
  const url = await checkWebhookUrl(input.url, settings);
  const endpoint: WebhookEndpoint = {
    id: newId('whe'),
    tenantId: input.tenantId ?? null,
    url: url.href,
    secret: newWebhookSecret(),
    createdAt: now.toISOString(),
  };
  await db
    .insertInto('webhook_endpoints')
    .values({ id: endpoint.id, tenant_id: endpoint.tenantId, url: endpoint.url, secret: endpoint.secret, created_at: endpoint.createdAt, disabled_at: null })
    .execute();
  return endpoint;
}

/** An enabled endpoint, or webhook_not_found. */
export async function getEndpoint(db: Kysely<Database>, id: string): Promise<WebhookEndpoint> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('disabled_at', 'is', null).executeTakeFirst();
  if (!row) throw new NotaryError('webhook_not_found', `no enabled webhook endpoint ${id}`);
  return { id: row.id, tenantId: row.tenant_id, url: row.url, secret: row.secret, createdAt: row.created_at };
}

/** A tenant's enabled endpoint; one of another tenant (or none) is webhook_not_found, as if it did not exist. */
export async function tenantEndpoint(db: Kysely<Database>, id: string, tenantId: string): Promise<WebhookEndpoint> {
  const endpoint = await getEndpoint(db, id);
  if (endpoint.tenantId !== tenantId) throw new NotaryError('webhook_not_found', `no enabled webhook endpoint ${id}`);
  return endpoint;
}

/** A tenant's enabled endpoints, oldest first. */
export async function tenantEndpoints(db: Kysely<Database>, tenantId: string): Promise<WebhookEndpoint[]> {
  const rows = await db.selectFrom('webhook_endpoints').selectAll().where('tenant_id', '=', tenantId).where('disabled_at', 'is', null).orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => ({ id: row.id, tenantId: row.tenant_id, url: row.url, secret: row.secret, createdAt: row.created_at }));
}

/**
 * Disables a tenant's endpoint (webhook_not_found when it is not one): no message is queued for it any more, and
 * its pending messages fail without another attempt. Its deliveries stay listed.
 */
export async function disableEndpoint(db: Kysely<Database>, id: string, tenantId: string, now: Date = new Date()): Promise<void> {
  await tenantEndpoint(db, id, tenantId);
  const at = now.toISOString();
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('webhook_endpoints').set({ disabled_at: at }).where('id', '=', id).where('disabled_at', 'is', null).execute();
    await trx
      .updateTable('webhook_messages')
      .set({ state: 'failed', claim_token: null, claimed_until: null, last_error: 'the endpoint was deleted', finished_at: at })
      .where('endpoint_id', '=', id)
      .where('state', '=', 'pending')
      .execute();
  });
}
