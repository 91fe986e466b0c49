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
