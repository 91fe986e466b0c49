import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { NotaryError } from '../../core/index.js';

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
 * What an address is to the fetcher:
 * - `public`: a global unicast address, always fetched;
 * - `private`: loopback, RFC 1918, unique-local, CGNAT: fetched only when the deployment allows private networks or
 *   lists the range;
 * - `forbidden`: link-local (which holds the cloud metadata services), the known metadata addresses outside it,
 *   unspecified, multicast, broadcast and reserved ranges: never fetched, whatever the settings say.
 */
export type AddressClass = 'public' | 'private' | 'forbidden';

export interface AddressVerdict {
  class: AddressClass;
  /** ipaddr.js's range name, or "metadata"; "unicast" for public addresses. */
  range: string;
  /** The IPv4 address an IPv6 form embeds (mapped, NAT64, 6to4, compatible), which is what was judged. */
  embedded: string | null;
}

const PRIVATE_RANGES = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal', 'deprecatedSiteLocal']);

/**
 * Cloud metadata and host services outside link-local: Alibaba (100.100.100.200, inside CGNAT), Azure's wire server
 * (168.63.129.16, inside public space), AWS's IPv6 metadata endpoint (fd00:ec2::254, inside unique-local).
 * 169.254.169.254 (AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean) is link-local, which is forbidden as a whole.
 */
const METADATA_ADDRESSES = new Set(['100.100.100.200', '168.63.129.16', 'fd00:ec2::254']);

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    return ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return null;
  }
}

function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const parts = v6.parts;
  const p = (i: number): number => parts[i] ?? 0;
  const fromWords = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return fromWords(p(6), p(7));
  if (range === '6to4') return fromWords(p(1), p(2));
  // IPv4-compatible (deprecated) ::a.b.c.d; :: and ::1 are handled by their own ranges.
  if (p(0) === 0 && p(1) === 0 && p(2) === 0 && p(3) === 0 && p(4) === 0 && p(5) === 0 && range === 'unicast') {
    return fromWords(p(6), p(7));
  }
  return null;
}

/** Classifies an IP address; IPv6 forms that embed an IPv4 address are judged by the embedded address. */
export function classifyAddress(address: string): AddressVerdict {
  const parsed = parseAddress(address);
  if (!parsed) return { class: 'forbidden', range: 'not an IP address', embedded: null };
  let judged: ipaddr.IPv4 | ipaddr.IPv6 = parsed;
  let embedded: string | null = null;
  if (parsed.kind() === 'ipv6') {
    const inner = embeddedIPv4(parsed as ipaddr.IPv6);
    if (inner) {
      judged = inner;
      embedded = inner.toString();
    }
  }
  // toString() is the canonical spelling: dotted quad, or RFC 5952's compressed IPv6.
  if (METADATA_ADDRESSES.has(judged.toString())) return { class: 'forbidden', range: 'metadata', embedded };
  const range = judged.range();
  if (range === 'unicast') return { class: 'public', range, embedded };
  if (PRIVATE_RANGES.has(range)) return { class: 'private', range, embedded };
  return { class: 'forbidden', range, embedded };
}

/** Why an address is not fetched with the default (public-only) policy, or null when it is public. */
export function blockedAddressReason(address: string): string | null {
  const verdict = classifyAddress(address);
  if (verdict.class === 'public') return null;
  return verdict.embedded ? `${verdict.range} (embedded in ${address})` : verdict.range;
}

/** A parsed CIDR range, e.g. "10.20.0.0/16" or "fd12:3456::/48". */
export type AddressRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses CIDR ranges, or throws a message naming the first bad one (for config validation). */
export function parseAddressRanges(ranges: readonly string[]): AddressRange[] {
  return ranges.map((range) => {
    try {
      return ipaddr.parseCIDR(range.trim());
    } catch {
      throw new Error(`"${range}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
    }
  });
}

function inRanges(address: string, ranges: readonly AddressRange[]): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  const v6 = parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6) : null;
  const candidates: Array<ipaddr.IPv4 | ipaddr.IPv6> = [parsed];
  const inner = v6 ? embeddedIPv4(v6) : null;
  if (inner) candidates.push(inner);
  return candidates.some((candidate) =>
    ranges.some(([base, bits]) => base.kind() === candidate.kind() && candidate.match(base, bits)),
  );
}

export interface AddressPolicy {
  /** Fetch every `private` address (loopback, RFC 1918, unique-local, CGNAT). Forbidden addresses stay refused. */
  allowPrivateNetworks: boolean;
  /** `private` addresses inside these CIDR ranges are fetched; forbidden addresses stay refused even inside them. */
  allowedPrivateRanges?: readonly string[];
  /**
   * Host names or IP literals (lower case, as in URL.hostname without brackets) whose private addresses are fetched:
   * for embedding, and for tests that need a first hop on loopback. Forbidden addresses stay refused.
   */
  allowedPrivateHosts?: readonly string[];
  /** Origins (URL.origin) whose private addresses are fetched: the crawler's seeds, which the operator named. */
  allowedPrivateOrigins?: readonly string[];
  resolver?: HostResolver;
}

const parsedRanges = new WeakMap<readonly string[], AddressRange[]>();

function rangesOf(policy: AddressPolicy): AddressRange[] {
  const list = policy.allowedPrivateRanges;
  if (!list || list.length === 0) return [];
  let ranges = parsedRanges.get(list);
  if (!ranges) {
    try {
      ranges = parseAddressRanges(list);
    } catch (err) {
      throw new NotaryError('invalid_config', `allowed_private_ranges: ${(err as Error).message}`);
    }
    parsedRanges.set(list, ranges);
  }
  return ranges;
}

/**
 * Resolves a URL's host and returns the address to connect to. Every address the name resolves to must be allowed
 * (a name mixing public and private answers is refused unless the private ones are allowed too); the caller connects
 * to the returned address only, so a second resolution cannot swap it.
 */
export async function vetUrl(url: URL, policy: AddressPolicy): Promise<ResolvedAddress> {
  const bare = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(bare)) {
    addresses = [{ address: bare, family: bare.includes(':') ? 6 : 4 }];
  } else {
    try {
      addresses = await (policy.resolver ?? systemResolver)(bare);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new NotaryError('upstream_unreachable', `cannot resolve ${bare}: ${(err as Error).message}`, { cause_code: code ?? null });
    }
    if (addresses.length === 0) throw new NotaryError('upstream_unreachable', `${bare} has no addresses`);
  }
  const exempt =
    policy.allowPrivateNetworks ||
    (policy.allowedPrivateHosts?.includes(bare) ?? false) ||
    (policy.allowedPrivateOrigins?.includes(url.origin) ?? false);
  for (const { address } of addresses) {
    const verdict = classifyAddress(address);
    if (verdict.class === 'public') continue;
    if (verdict.class === 'private' && (exempt || inRanges(address, rangesOf(policy)))) continue;
    const range = verdict.embedded ? `${verdict.range}, embedded in ${address}` : verdict.range;
    const why =
      verdict.class === 'forbidden'
        ? 'which is never fetched (link-local, metadata and broadcast ranges cannot be allowed)'
        : `which this deployment does not fetch; an operator can allow it with extract.allowed_private_ranges (NOTARY_ALLOWED_PRIVATE_RANGES, e.g. ${verdict.range}) or extract.allow_private_networks (NOTARY_ALLOW_PRIVATE_NETWORKS=true)`;
    throw new NotaryError('blocked_address', `${bare} resolves to ${address} (${range}), ${why}`, {
      host: bare,
      address,
      range: verdict.range,
    });
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
