import { sha256 } from '../crypto/digest.js';
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH, signBytes, verifyBytes } from '../crypto/ed25519.js';
import { bytesEqual, concatBytes, fromBase64, toBase64, toHex } from '../crypto/encoding.js';
import { HASH_LENGTH } from './merkle.js';

/**
 * C2SP signed notes (c2sp.org/signed-note) with Ed25519 signatures, and the tlog-checkpoint body they carry
 * (c2sp.org/tlog-checkpoint): origin, tree size, base64 root hash.
 */

const ED25519_NOTE_TYPE = 0x01;
const EM_DASH = '\u2014';
const encoder = new TextEncoder();

export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

export interface NoteVerifier {
  name: string;
  publicKey: Uint8Array;
}

function checkKeyName(name: string): void {
  if (name.length === 0 || /[\s+]/u.test(name)) throw new RangeError(`note key name ${JSON.stringify(name)} must be non-empty without spaces or "+"`);
}

/** SHA-256(key name || 0x0A || 0x01 || public key)[:4]. */
export function noteKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  return sha256(concatBytes(encoder.encode(`${name}\n`), Uint8Array.of(ED25519_NOTE_TYPE), publicKey)).slice(0, 4);
}

/** `<name>+<hex key id>+<base64(0x01 || public key)>`, the verifier key format of signed notes. */
export function formatVerifierKey(name: string, publicKey: Uint8Array): string {
  checkKeyName(name);
  return `${name}+${toHex(noteKeyId(name, publicKey))}+${toBase64(concatBytes(Uint8Array.of(ED25519_NOTE_TYPE), publicKey))}`;
}

export function parseVerifierKey(vkey: string): NoteVerifier {
  // The base64 key material may itself contain "+": split at the first two only.
  const match = /^([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey);
  const [, name, hexId, material] = match ?? [];
  if (!name || !hexId || !material) throw new Error(`malformed verifier key ${JSON.stringify(vkey)}`);
  const bytes = fromBase64(material);
  if (!bytes || bytes.length !== 1 + ED25519_PUBLIC_KEY_LENGTH || bytes[0] !== ED25519_NOTE_TYPE) throw new Error('verifier key is not an Ed25519 key');
  const publicKey = bytes.slice(1);
  if (toHex(noteKeyId(name, publicKey)) !== hexId) throw new Error('verifier key id does not match its name and key');
  return { name, publicKey };
}

export function formatCheckpointText(checkpoint: Checkpoint): string {
  if (checkpoint.origin.length === 0 || checkpoint.origin.includes('\n')) throw new RangeError('checkpoint origin must be one non-empty line');
  if (checkpoint.rootHash.length !== HASH_LENGTH) throw new RangeError('checkpoint root hash must be 32 bytes');
  return `${checkpoint.origin}\n${checkpoint.size}\n${toBase64(checkpoint.rootHash)}\n`;
}

export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw new Error('checkpoint text must be at least three lines, each ending in a newline');
  const [origin, sizeLine, rootLine] = lines;
  if (!origin) throw new Error('checkpoint origin is empty');
  if (!sizeLine || !/^(0|[1-9][0-9]*)$/.test(sizeLine) || !Number.isSafeInteger(Number(sizeLine))) throw new Error(`checkpoint tree size ${JSON.stringify(sizeLine)} is not a decimal without leading zeroes`);
  const rootHash = rootLine ? fromBase64(rootLine) : null;
  if (!rootHash || rootHash.length !== HASH_LENGTH) throw new Error('checkpoint root hash is not 32 bytes of base64');
  if (lines.slice(3, -1).some((line) => line.length === 0)) throw new Error('checkpoint extension lines must be non-empty');
  return { origin, size: Number(sizeLine), rootHash };
}

/** Signs `text` (which must end in a newline) as a note: text, blank line, one signature line. */
export function signNote(text: string, name: string, seed: Uint8Array, publicKey: Uint8Array): string {
  checkKeyName(name);
  if (!text.endsWith('\n')) throw new RangeError('note text must end with a newline');
  const signature = signBytes(encoder.encode(text), seed);
  return `${text}\n${EM_DASH} ${name} ${toBase64(concatBytes(noteKeyId(name, publicKey), signature))}\n`;
}

export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error('a note must not contain control characters other than newline');
  if (!note.endsWith('\n')) throw new Error('a note must end with a newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('a note needs a blank line between its text and its signatures');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/u.exec(line);
    const bytes = match?.[2] ? fromBase64(match[2]) : null;
    if (!match?.[1] || !bytes || bytes.length < 5) throw new Error(`malformed note signature line ${JSON.stringify(line)}`);
    signatures.push({ name: match[1], keyId: bytes.slice(0, 4), signature: bytes.slice(4) });
  }
  if (signatures.length === 0) throw new Error('a note needs at least one signature');
  return { text, signatures };
}

/**
 * Opens a signed note with trusted verifiers: signatures of unknown keys are ignored; a signature of a known key
 * (same name and key id) that fails makes the whole note invalid; at least one known signature must verify.
 */
export function openNote(note: string, verifiers: NoteVerifier[]): { text: string; verifiedBy: NoteVerifier[] } {
  const { text, signatures } = parseNote(note);
  const message = encoder.encode(text);
  const verifiedBy: NoteVerifier[] = [];
  for (const sig of signatures) {
    for (const verifier of verifiers) {
      if (verifier.name !== sig.name || !bytesEqual(noteKeyId(verifier.name, verifier.publicKey), sig.keyId)) continue;
      if (sig.signature.length !== ED25519_SIGNATURE_LENGTH || !verifyBytes(sig.signature, message, verifier.publicKey)) {
        throw new Error(`the note's signature by ${sig.name} (key ${toHex(sig.keyId)}) does not verify`);
      }
      verifiedBy.push(verifier);
    }
  }
  if (verifiedBy.length === 0) throw new Error('the note carries no signature by a trusted key');
  return { text, verifiedBy };
}

/** A checkpoint note opened with trusted keys; its origin must match what the caller expects when given. */
export function openCheckpoint(note: string, verifiers: NoteVerifier[], expectedOrigin?: string): Checkpoint & { note: string } {
  const { text } = openNote(note, verifiers);
  const checkpoint = parseCheckpointText(text);
  if (expectedOrigin !== undefined && checkpoint.origin !== expectedOrigin) {
    throw new Error(`checkpoint origin ${JSON.stringify(checkpoint.origin)} is not the expected ${JSON.stringify(expectedOrigin)}`);
  }
  return { ...checkpoint, note };
}
