import { verifyEd25519 } from './ed25519.js';
import { bytesEqual, concatBytes, fromBase64, sha256, utf8 } from './encoding.js';

/** A C2SP note verifier key: `<name>+<hex key id>+<base64(0x01 || Ed25519 public key)>`. */
export interface VerifierKey {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
}

/** A verified C2SP tlog-checkpoint: origin, tree size, root hash. */
export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
  /** The signed note as received. */
  note: string;
}

export async function noteKeyId(name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  return (await sha256(concatBytes(utf8.encode(name), Uint8Array.of(0x0a, 0x01), publicKey))).slice(0, 4);
}

export async function parseVerifierKey(vkey: string): Promise<VerifierKey> {
  // The key is base64 and may itself contain "+": split at the first two only.
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  const [name, hexId, key] = [vkey.slice(0, first), vkey.slice(first + 1, second), vkey.slice(second + 1)];
  if (first <= 0 || second < 0 || !key || !/^[0-9a-f]{8}$/.test(hexId)) throw new Error(`not a note verifier key: ${vkey}`);
  const raw = fromBase64(key);
  if (raw.length !== 33 || raw[0] !== 0x01) throw new Error('the verifier key is not an Ed25519 key (type 0x01, 32 bytes)');
  const publicKey = raw.slice(1);
  const keyId = await noteKeyId(name, publicKey);
  if (!bytesEqual(keyId, Uint8Array.from(hexId.match(/../g) ?? [], (h) => parseInt(h, 16)))) throw new Error('the verifier key id does not match its name and key');
  return { name, keyId, publicKey };
}

/** Verifies a signed note with any of the keys; returns its text. Throws when no known key signed it. */
export async function openNote(note: string, verifiers: readonly VerifierKey[]): Promise<string> {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('not a signed note (text, blank line, signature lines)');
  const text = note.slice(0, split + 1);
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!match) throw new Error(`malformed signature line: ${line}`);
    const [, name = '', b64 = ''] = match;
    const sig = fromBase64(b64);
    if (sig.length !== 68) continue;
    for (const v of verifiers) {
      if (v.name === name && bytesEqual(v.keyId, sig.slice(0, 4)) && (await verifyEd25519(sig.slice(4), utf8.encode(text), v.publicKey))) return text;
    }
  }
  throw new Error('the note is not signed by a known key (the signature does not verify)');
}

/** Verifies a checkpoint note and reads it; `origin`, when given, must match its first line. */
export async function openCheckpoint(note: string, verifiers: readonly VerifierKey[], origin?: string): Promise<Checkpoint> {
  const text = await openNote(note, verifiers);
  const [first = '', size = '', root = ''] = text.split('\n');
  if (origin !== undefined && first !== origin) throw new Error(`the checkpoint is for ${first}, not ${origin}`);
  if (!/^(0|[1-9]\d*)$/.test(size)) throw new Error('the checkpoint size is not a number');
  const rootHash = fromBase64(root);
  if (rootHash.length !== 32) throw new Error('the checkpoint root is not a SHA-256 hash');
  return { origin: first, size: Number(size), rootHash, note };
}
