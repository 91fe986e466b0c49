import { NotaryError } from '../../core/index.js';
import type { Delivery, WebhookEndpoint, WebhookOutbox } from '../../webhooks/index.js';
import { defineAccountRoute, type AccountRoute } from '../account-routes.js';
import { countSchema, httpStatusSchema } from '../paid/schemas.js';
import { ABSOLUTE_HTTP_URL } from './extract.js';

/** Webhook endpoints one tenant may have at once. */
const MAX_ENDPOINTS = 100;

const endpointIdSchema = { type: 'string', pattern: '^whe_[0-9A-Za-z]{1,64}$', description: 'The endpoint id (`whe_...`).' } as const;
const idParams = { type: 'object', additionalProperties: false, required: ['id'], properties: { id: endpointIdSchema } } as const;
const isoTime = { type: 'string', description: 'ISO 8601, UTC.' } as const;

const endpointProperties = { id: endpointIdSchema, url: { type: 'string' }, created_at: isoTime } as const;
const endpointSchema = { type: 'object', additionalProperties: false, required: ['id', 'url', 'created_at'], properties: endpointProperties } as const;

const attemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'started_at', 'duration_ms', 'status', 'error_code'],
  properties: {
    attempt: countSchema,
    started_at: isoTime,
    duration_ms: countSchema,
    status: { ...httpStatusSchema, type: ['integer', 'null'], description: "The receiver's answer; null when none came (timeout, network error, refused address)." },
    error_code: { type: ['string', 'null'], description: 'upstream_error, upstream_timeout, upstream_unreachable or webhook_address_blocked; null when delivered.' },
  },
} as const;

const deliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'state', 'attempts', 'next_attempt_at', 'created_at', 'finished_at'],
  properties: {
    id: { type: 'string', description: 'The message id, sent as webhook-id with every attempt.' },
    type: { type: 'string', description: 'The event type, e.g. crawl.completed.' },
    state: { type: 'string', enum: ['pending', 'delivering', 'delivered', 'failed'] },
    // webhooks.max_attempts is at most 50.
    attempts: { type: 'array', maxItems: 50, items: attemptSchema },
    next_attempt_at: { type: ['string', 'null'], description: 'When the next attempt is due, while pending.' },
    created_at: isoTime,
    finished_at: { type: ['string', 'null'] },
  },
} as const;

function endpointView(endpoint: WebhookEndpoint): { id: string; url: string; created_at: string } {
  return { id: endpoint.id, url: endpoint.url, created_at: endpoint.createdAt };
}

function deliveryView(delivery: Delivery): Record<string, unknown> {
  return {
    id: delivery.id,
    type: delivery.eventType,
    state: delivery.state,
    attempts: delivery.attempts.map((a) => ({ attempt: a.attempt, started_at: a.startedAt, duration_ms: a.durationMs, status: a.status, error_code: a.errorCode })),
    next_attempt_at: delivery.nextAttemptAt,
    created_at: delivery.createdAt,
    finished_at: delivery.finishedAt,
  };
}

/** A tenant's webhook endpoints: register (the secret shown once), list, delete, and the deliveries of one. */
export function webhookRoutes(outbox: WebhookOutbox): AccountRoute[] {
  return [
    defineAccountRoute<unknown, { url: string }, Record<string, unknown>>({
      method: 'POST',
      url: '/v1/webhooks',
      summary: 'Register a webhook endpoint; the answer shows its signing secret (whsec_...) once.',
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['url'],
        properties: { url: { type: 'string', minLength: 1, maxLength: 4096, pattern: ABSOLUTE_HTTP_URL, description: 'Where messages are POSTed: an absolute http(s) URL.' } },
      },
      status: 201,
      result: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'url', 'secret', 'created_at'],
        properties: { ...endpointProperties, secret: { type: 'string', description: 'The Standard Webhooks signing secret; not shown again.' } },
      },
      problems: [422],
      async handle({ body, caller }) {
        if ((await outbox.listEndpoints(caller.tenantId)).length >= MAX_ENDPOINTS) {
          throw new NotaryError('invalid_request', `A tenant has at most ${MAX_ENDPOINTS} webhook endpoints: delete one (DELETE /v1/webhooks/{id}) first`, { max_endpoints: MAX_ENDPOINTS });
        }
        const endpoint = await outbox.registerEndpoint({ url: body.url, tenantId: caller.tenantId });
        return { ...endpointView(endpoint), secret: endpoint.secret };
      },
    }),
    defineAccountRoute<unknown, unknown, Record<string, unknown>>({
      method: 'GET',
      url: '/v1/webhooks',
      summary: "The tenant's webhook endpoints (without their secrets).",
      status: 200,
      result: { type: 'object', additionalProperties: false, required: ['webhooks'], properties: { webhooks: { type: 'array', maxItems: MAX_ENDPOINTS, items: endpointSchema } } },
      async handle({ caller }) {
        return { webhooks: (await outbox.listEndpoints(caller.tenantId)).map(endpointView) };
      },
    }),
    defineAccountRoute<{ id: string }, unknown, undefined>({
      method: 'DELETE',
      url: '/v1/webhooks/:id',
      summary: 'Delete a webhook endpoint: nothing more is sent to it (its pending messages fail).',
      params: idParams,
      status: 204,
      problems: [404],
      async handle({ params, caller }) {
        await outbox.deleteEndpoint(params.id, caller.tenantId);
        return undefined;
      },
    }),
    defineAccountRoute<{ id: string }, unknown, Record<string, unknown>>({
      method: 'GET',
      url: '/v1/webhooks/:id/deliveries',
      summary: "An endpoint's messages, newest first (at most 100): event type, state, each attempt's status and time, the next attempt.",
      params: idParams,
      status: 200,
      result: { type: 'object', additionalProperties: false, required: ['deliveries'], properties: { deliveries: { type: 'array', maxItems: 100, items: deliverySchema } } },
      problems: [404],
      async handle({ params, caller }) {
        await outbox.endpointOf(params.id, caller.tenantId);
        return { deliveries: (await outbox.listDeliveries({ endpointId: params.id, tenantId: caller.tenantId })).map(deliveryView) };
      },
    }),
  ];
}
