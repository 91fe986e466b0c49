import { NotaryError, isNotaryError } from '../core/index.js';
import { parseHttpUrl, vetUrl, type AddressPolicy, type HostResolver, type ResolvedAddress } from '../extract/index.js';

/** The address policy of webhook URLs: extraction's strict one, with its own operator switch. */
export interface WebhookAddressSettings {
  /** webhooks.allow_private_networks */
  allowPrivateNetworks: boolean;
  /** Injectable resolver (tests point a name anywhere); the system's by default. */
  resolver?: HostResolver;
}

const FIX =
  'use a public URL; an operator who means to call internal receivers sets webhooks.allow_private_networks: true (link-local and metadata addresses are never called)';

function policyOf(settings: WebhookAddressSettings): AddressPolicy {
  return { allowPrivateNetworks: settings.allowPrivateNetworks, ...(settings.resolver ? { resolver: settings.resolver } : {}) };
}

/**
 * Resolves a webhook URL's host and returns the one address to connect to, or throws webhook_address_blocked (a
 * private address without the operator setting, or a forbidden one) or upstream_unreachable (no address).
 */
export async function vetWebhookUrl(url: URL, settings: WebhookAddressSettings): Promise<ResolvedAddress> {
  try {
    return await vetUrl(url, policyOf(settings));
  } catch (err) {
    if (isNotaryError(err) && err.code === 'blocked_address') {
      throw new NotaryError('webhook_address_blocked', `${err.message.replace(/, which .*$/, '')}: ${FIX}`, err.extra);
    }
    throw err;
  }
}

/**
 * Checks a URL a tenant registers: absolute http(s) without credentials (invalid_url), and not resolving to a
 * refused address (webhook_address_blocked). A name that does not resolve now is accepted: each delivery checks again.
 */
export async function checkWebhookUrl(raw: unknown, settings: WebhookAddressSettings): Promise<URL> {
  const url = parseHttpUrl(raw);
  try {
    await vetWebhookUrl(url, settings);
  } catch (err) {
    if (isNotaryError(err) && err.code === 'upstream_unreachable') return url;
    throw err;
  }
  return url;
}
