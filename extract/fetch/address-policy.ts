import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { NotaryError } from '../../core/errors.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses; injectable so tests can point a name anywhere. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const records = await dnsLookup(hostname, { all: true, verbatim: true });
  return records.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

/**
 * Why an address must not be fetched, or null when it is a public unicast address. Only ipaddr.js's "unicast"
 * range passes; IPv6 forms that embed an IPv4 address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64
 * 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16) are judged by the embedded address.
 */
export function blockedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const embedded = embeddedIPv4(v6);
    if (embedded) {
      const reason = blockedAddressReason(embedded.toString());
      return reason ? `${reason} (embedded in ${v6.toString()})` : null;
    }
    const range = v6.range();
    return range === 'unicast' ? null : range;
  }
  const range = (parsed as ipaddr.IPv4).range();
  return range === 'unicast' ? null : range;
}

function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const parts = v6.parts;
  const p = (i: number): number => parts[i] ?? 0;
  const fromWords = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return fromWords(p(6), p(7));
  if (range === 'rfc6052') return fromWords(p(6), p(7));
  if (range === '6to4') return fromWords(p(1), p(2));
  // IPv4-compatible (deprecated) ::a.b.c.d; :: and ::1 are handled by their own ranges.
  if (p(0) === 0 && p(1) === 0 && p(2) === 0 && p(3) === 0 && p(4) === 0 && p(5) === 0 && range === 'unicast') {
    return fromWords(p(6), p(7));
  }
  return null;
}

export interface AddressPolicy {
  allowPrivateNetworks: boolean;
  /**
   * Host names or IP literals (lower case, as in URL.hostname without brackets) exempt from the check, for a private
   * deployment that must reach one intranet host, and for tests that need a first hop on loopback.
   */
  allowedPrivateHosts?: readonly string[];
  resolver?: HostResolver;
}

/**
 * Resolves a URL's host and returns the address to connect to. Every address the name resolves to must be public
 * (a name mixing public and private answers is refused); the caller connects to the returned address only.
 */
export async function vetHost(hostname: string, policy: AddressPolicy): Promise<ResolvedAddress> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(bare)) {
    addresses = [{ address: bare, family: bare.includes(':') ? 6 : 4 }];
  } else {
    try {
      addresses = await (policy.resolver ?? systemResolver)(bare);
    } catch (err) {
      throw new NotaryError('upstream_unreachable', `cannot resolve ${bare}: ${(err as Error).message}`);
    }
    if (addresses.length === 0) throw new NotaryError('upstream_unreachable', `${bare} has no addresses`);
  }
  if (!policy.allowPrivateNetworks && !policy.allowedPrivateHosts?.includes(bare.toLowerCase())) {
    for (const { address } of addresses) {
      const reason = blockedAddressReason(address);
      if (reason) {
        throw new NotaryError('blocked_address', `${bare} resolves to ${address} (${reason}), which is not fetched`, {
          host: bare,
          address,
          range: reason,
        });
      }
    }
  }
  const first = addresses[0];
  if (!first) throw new NotaryError('upstream_unreachable', `${bare} has no addresses`);
  return first;
}

/** Parses and checks a user-supplied URL: absolute, http or https, with a host. */
export function parseHttpUrl(raw: unknown): URL {
  if (typeof raw !== 'string' || raw.trim() === '') throw new NotaryError('invalid_url', 'url must be a non-empty string');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new NotaryError('invalid_url', `not an absolute URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NotaryError('invalid_url', `only http and https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (!url.hostname) throw new NotaryError('invalid_url', 'the URL has no host');
  if (url.username || url.password) throw new NotaryError('invalid_url', 'URLs with credentials are not fetched');
  url.hash = '';
  return url;
}
