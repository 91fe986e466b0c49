import type { Timestamp } from '../storage/index.js';

/** A tenant's webhook endpoint: its URL and the secret its messages are signed with. */
export interface WebhookEndpointsTable {
  /** `whe_...` */
  id: string;
  tenant_id: string | null;
  url: string;
  /** `whsec_` + base64 of 24 random bytes (Standard Webhooks). */
  secret: string;
  created_at: Timestamp;
  disabled_at: Timestamp | null;
}

export type DeliveryState = 'pending' | 'delivering' | 'delivered' | 'failed';

/** One message to one endpoint (a delivery): every attempt of it carries the same webhook-id, its `id`. */
export interface WebhookMessagesTable {
  /** `msg_...`, sent as webhook-id. */
  id: string;
  endpoint_id: string;
  event_type: string;
  /** The JSON body, exactly the bytes signed and sent. */
  payload: string;
  state: DeliveryState;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due (ISO 8601, UTC), while pending. */
  next_attempt_at: Timestamp;
  /** While delivering: who claimed it and until when; an expired claim (a crashed process) is claimed again. */
  claim_token: string | null;
  claimed_until: Timestamp | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
}

/** One HTTP attempt of a message. */
export interface WebhookAttemptsTable {
  message_id: string;
  attempt: number;
  started_at: Timestamp;
  duration_ms: number;
  /** The answer's status, or null when none came (timeout, network error, refused address). */
  status: number | null;
  /** A registry code for a failure (upstream_timeout, upstream_unreachable, upstream_error, webhook_address_blocked). */
  error_code: string | null;
  error: string | null;
}

declare module '../storage/schema.js' {
  interface Database {
    webhook_endpoints: WebhookEndpointsTable;
    webhook_messages: WebhookMessagesTable;
    webhook_attempts: WebhookAttemptsTable;
  }
}
