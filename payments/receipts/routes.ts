import { NotaryError } from '../../core/index.js';
import { fromBase64, fromBase64Url, fromHex, toBase64 } from '../crypto/index.js';
import type { PluginRoute } from '../plugin.js';
import type { Receipts } from './index.js';

/** Longest range of entries one call returns. */
export const MAX_LOG_ENTRIES = 1000;
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Indexes from 0 and tree sizes from 1, at most 15 digits: every value the pattern allows is an exact integer. */
const indexParameter = { type: 'string', maxLength: 15, pattern: '^(0|[1-9][0-9]{0,14})$' } as const;
const sizeParameter = { type: 'string', maxLength: 15, pattern: '^[1-9][0-9]{0,14}$' } as const;
/** A SHA-256 hash: 64 hex digits, base64 (a "+" may arrive as a space) or base64url, in canonical form. */
const leafHashParameter = {
  type: 'string',
  maxLength: 64,
  pattern: '^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/ ]{42}[AEIMQUYcgkosw048]=|[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048])$',
} as const;

function parseSize(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new NotaryError('invalid_request', `${name} must be an integer`);
  return n;
}

/** A leaf hash in a query string: 64 hex digits, base64url, or base64 (a "+" decoded to a space by the query parser is taken back). */
function parseLeafHash(value: string): Uint8Array {
  const hash = /^[0-9a-fA-F]{64}$/.test(value) ? fromHex(value) : (fromBase64(value.replaceAll(' ', '+')) ?? fromBase64Url(value));
  if (!hash || hash.length !== 32) throw new NotaryError('invalid_request', 'leaf_hash must be a SHA-256 hash in base64, base64url or hex');
  return hash;
}

const cacheFor = (seconds: number) => ({ 'Cache-Control': `public, max-age=${seconds}` });

/**
 * The public side of signed receipts, all unauthenticated and cacheable: the JWKS, the log's latest C2SP
 * checkpoint, inclusion and consistency proofs, and the log's entries for monitors. No HTTP framework: api/ serves
 * them as the receipts plug-in's routes.
 */
export function receiptRoutes(receipts: Receipts): PluginRoute[] {
  const { log, keyring, settings } = receipts;
  const checkpointMaxAge = Math.max(1, Math.ceil(settings.checkpointIntervalMs / 1000));
  return [
    {
      method: 'GET',
      url: '/.well-known/jwks.json',
      schema: { summary: 'The receipt signing keys (JWKS, Ed25519), current and retired, with their validity windows.', tags: ['receipts'], 'x-notary-produces': 'application/jwk-set+json' },
      handle: async () => ({ body: JSON.stringify(keyring.jwks()), type: 'application/jwk-set+json', headers: cacheFor(300) }),
    },
    {
      method: 'GET',
      url: '/v1/receipts/log',
      schema: { summary: 'The receipt log: origin, tree size, C2SP verifier keys.', tags: ['receipts'] },
      handle: async () => {
        const size = await log.treeSize();
        return {
          headers: cacheFor(60),
          body: {
            origin: log.origin,
            issuer: settings.issuer,
            tree_size: size,
            verifier_keys: receipts.verifierKeys(),
            jwks: '/.well-known/jwks.json',
            checkpoint: '/v1/receipts/log/checkpoint',
            hashing: 'RFC 6962: leaf = JCS(receipt), leaf hash = SHA-256(0x00 || leaf), node = SHA-256(0x01 || left || right)',
          },
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/receipts/log/checkpoint',
      schema: { summary: 'The latest signed checkpoint of the receipt log (C2SP signed note).', tags: ['receipts'], 'x-notary-produces': 'text/plain' },
      handle: async () => ({ body: (await log.checkpoint()).note, type: 'text/plain; charset=utf-8', headers: cacheFor(checkpointMaxAge) }),
    },
    {
      method: 'GET',
      url: '/v1/receipts/log/inclusion',
      schema: {
        summary: 'Inclusion proof of one receipt (by leaf_hash, request_id or leaf_index) at a tree size (RFC 9162).',
        tags: ['receipts'],
        'x-notary-query-one-of': ['leaf_hash', 'request_id', 'leaf_index'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            leaf_hash: leafHashParameter,
            request_id: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9_-]{8,64}$' },
            leaf_index: indexParameter,
            tree_size: sizeParameter,
          },
        },
      },
      handle: async ({ query }) => {
        const { leaf_hash, request_id, leaf_index } = query;
        if ([leaf_hash, request_id, leaf_index].filter((v) => v !== undefined).length !== 1) {
          throw new NotaryError('invalid_request', 'Name the receipt by exactly one of leaf_hash, request_id or leaf_index');
        }
        let treeSize = parseSize(query['tree_size'], 'tree_size');
        let note: string | undefined;
        if (treeSize === undefined) {
          const checkpoint = await log.checkpoint();
          treeSize = checkpoint.size;
          note = checkpoint.note;
        }
        let proof;
        if (leaf_hash !== undefined) {
          proof = await log.inclusionProof(parseLeafHash(leaf_hash), treeSize);
        } else if (leaf_index !== undefined) {
          proof = await log.inclusionProofAt(parseSize(leaf_index, 'leaf_index') ?? 0, treeSize);
        } else {
          const entries = await log.entriesByRequestId(request_id ?? '');
          const first = entries[0];
          if (!first) throw new NotaryError('receipt_not_found', `No receipt for request ${request_id} is in the log`);
          proof = await log.inclusionProofAt(first.leafIndex, treeSize);
        }
        return {
          headers: { 'Cache-Control': note === undefined ? IMMUTABLE : 'no-cache' },
          body: {
            leaf_index: proof.leafIndex,
            tree_size: proof.treeSize,
            leaf_hash: toBase64(proof.leafHash),
            hashes: proof.hashes.map(toBase64),
            ...(note === undefined ? {} : { checkpoint: note }),
          },
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/receipts/log/consistency',
      schema: {
        summary: 'Consistency proof between two tree sizes of the receipt log (RFC 9162).',
        tags: ['receipts'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['first', 'second'],
          properties: { first: sizeParameter, second: sizeParameter },
        },
      },
      handle: async ({ query }) => {
        const proof = await log.consistencyProof(parseSize(query['first'], 'first') ?? 0, parseSize(query['second'], 'second') ?? 0);
        return { headers: { 'Cache-Control': IMMUTABLE }, body: { first: proof.first, second: proof.second, hashes: proof.hashes.map(toBase64) } };
      },
    },
    {
      method: 'GET',
      url: '/v1/receipts/log/entries',
      schema: {
        summary: 'The signed receipts with start <= index < end, at most 1,000 from start, in log order, for monitors.',
        description:
          'Like a slice: fewer when the log ends before `end` or the range is longer than 1,000 (ask again from the next index), none when `end` is not above `start`.',
        tags: ['receipts'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['start', 'end'],
          properties: { start: indexParameter, end: indexParameter },
        },
      },
      handle: async ({ query }) => {
        const start = parseSize(query['start'], 'start') ?? 0;
        const end = Math.min(parseSize(query['end'], 'end') ?? 0, start + MAX_LOG_ENTRIES);
        const entries = end > start ? await log.entries(start, end) : [];
        // A full range never changes; a short one grows as the log does.
        return {
          headers: { 'Cache-Control': entries.length === Math.max(0, end - start) ? IMMUTABLE : 'no-cache' },
          body: { entries: entries.map((e) => ({ leaf_index: e.leafIndex, receipt: e.receipt })) },
        };
      },
    },
  ];
}
