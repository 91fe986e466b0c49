import { readFileSync } from 'node:fs';
import { NotaryError } from '../../../core/index.js';
import './errors.js'; // registers the mpp_* error codes this file throws
import { authorizationHeader, buildEnvelope, decodeEnvelopeJson, MAX_ENVELOPE_LIFETIME_S, type PartySigner } from './envelope.js';
import { generatePartyKey, readPartyKeyFile, writePartyKeyFile } from './key-file.js';
import { equalShares, formatShare, parseShare, SHARE_PATTERN } from './shares.js';

/** `notary mpp keygen`: a new party key pair as a private JWK file; the public key alone on the last line of stdout. */
export function mppKeygenCommand(opts: { out: string; force?: boolean }): void {
  const key = generatePartyKey();
  try {
    writePartyKeyFile(opts.out, key, opts.force === true);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new NotaryError('invalid_request', `${opts.out} exists; pass --force to replace it`);
    throw err;
  }
  process.stderr.write(`wrote the private key to ${opts.out} (readable by you only; kid ${key.kid})\n`);
  process.stderr.write(`register the public key on the server: notary parties add-key --tenant <name> --public-key ${key.x}\n`);
  process.stdout.write(`${key.x}\n`);
}

interface PartySpec {
  party: string;
  share: string | null;
  file: string;
}

/** `NAME=SHARE:KEYFILE`, or `NAME=KEYFILE` when every party pays an equal share. */
function parsePartySpec(spec: string): PartySpec {
  const eq = spec.indexOf('=');
  if (eq <= 0 || eq === spec.length - 1) throw new NotaryError('invalid_request', `--party "${spec}": write NAME=SHARE:KEYFILE (e.g. alice=0.5:alice.jwk) or NAME=KEYFILE`);
  const party = spec.slice(0, eq);
  const rest = spec.slice(eq + 1);
  const colon = rest.indexOf(':');
  const maybeShare = colon > 0 ? rest.slice(0, colon) : '';
  if (SHARE_PATTERN.test(maybeShare)) return { party, share: maybeShare, file: rest.slice(colon + 1) };
  return { party, share: null, file: rest };
}

function partySigners(specs: readonly string[]): PartySigner[] {
  if (specs.length === 0) throw new NotaryError('invalid_request', 'name at least one paying party with --party NAME=SHARE:KEYFILE');
  const parsed = specs.map(parsePartySpec);
  const withShare = parsed.filter((p) => p.share !== null).length;
  if (withShare !== 0 && withShare !== parsed.length) throw new NotaryError('invalid_request', 'give every --party a share, or none (equal shares)');
  const shares = withShare === 0 ? equalShares(parsed.length) : parsed.map((p) => p.share ?? '0');
  return parsed.map((p, i) => {
    let seed: Uint8Array;
    try {
      seed = readPartyKeyFile(p.file).seed;
    } catch (err) {
      throw new NotaryError('invalid_request', `party "${p.party}": ${err instanceof Error ? err.message : String(err)}`);
    }
    return { party: p.party, share: shares[i] ?? '0', seed };
  });
}

export interface EnvelopeOptions {
  url: string;
  method: string;
  body?: string;
  bodyFile?: string;
  credits: number;
  party: string[];
  ttl: number;
  header?: boolean;
}

/**
 * `notary mpp envelope`: builds and signs an envelope for one request with the parties' private key files. The body
 * must be byte for byte what will be sent (its SHA-256 is signed). Prints the envelope (or the whole Authorization
 * value with --header) alone on the last line of stdout, a summary on stderr.
 */
export function mppEnvelopeCommand(opts: EnvelopeOptions): void {
  if ((opts.body === undefined) === (opts.bodyFile === undefined)) throw new NotaryError('invalid_request', 'give the request body with --body or --body-file (exactly one)');
  if (!URL.canParse(opts.url) || !/^https?:$/.test(new URL(opts.url).protocol)) throw new NotaryError('invalid_request', `--url must be the absolute http(s) URL of the call, got "${opts.url}"`);
  if (!Number.isInteger(opts.ttl) || opts.ttl < 1 || opts.ttl > MAX_ENVELOPE_LIFETIME_S) throw new NotaryError('invalid_request', `--ttl must be 1 to ${MAX_ENVELOPE_LIFETIME_S} seconds`);
  const body = opts.bodyFile !== undefined ? new Uint8Array(readFileSync(opts.bodyFile === '-' ? 0 : opts.bodyFile)) : new TextEncoder().encode(opts.body ?? '');
  const parties = partySigners(opts.party);
  const sum = parties.reduce((total, p) => total + (parseShare(p.share) ?? 0n), 0n);
  if (sum !== 1_000_000n) throw new NotaryError('invalid_request', `the shares sum to ${formatShare(sum)}, not 1`);
  const { envelope, encoded } = buildEnvelope({ method: opts.method, url: opts.url, body, totalCredits: opts.credits, parties, ttlSeconds: opts.ttl });
  process.stderr.write(
    `envelope ${envelope.env_id} for ${envelope.htm} ${envelope.htu}: up to ${envelope.total_credits} credits shared by ${parties
      .map((p) => `${p.party} ${p.share}`)
      .join(', ')}; expires ${envelope.expires}, single use\n`,
  );
  process.stdout.write(`${opts.header ? authorizationHeader(encoded) : encoded}\n`);
}

/** `notary mpp decode`: the JSON inside an envelope (or an Authorization value), for debugging; verifies nothing. */
export function mppDecodeCommand(value: string): void {
  const text = value.trim().replace(/^(Authorization:\s*)?MPP\s+envelope=/i, '').replace(/^"|"$/g, '');
  process.stdout.write(`${JSON.stringify(decodeEnvelopeJson(text), null, 2)}\n`);
}
