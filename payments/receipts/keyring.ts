import { closeSync, constants, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync, type Stats } from 'node:fs';
import path from 'node:path';
import { NotaryError } from '../../core/index.js';
import { ED25519_SEED_LENGTH, generateSeed, publicKeyFromSeed, signBytes } from '../crypto/ed25519.js';
import { bytesEqual, fromBase64Url, toBase64Url } from '../crypto/encoding.js';
import { jwkThumbprint, type Jwks, type PublicJwk, type VerificationKey } from '../crypto/jwk.js';
import './errors.js'; // registers the receipt error codes this file throws

export const KEYRING_FORMAT = 'notary-receipt-keys-v1';

/** One key as stored in the keyring file. `d` is the RFC 8032 seed; `exp` is null on the current key. */
interface StoredKey {
  kid: string;
  x: string;
  d: string;
  nbf: number;
  exp: number | null;
}

interface KeyringDocument {
  format: typeof KEYRING_FORMAT;
  keys: StoredKey[];
}

/**
 * A signing key. The seed lives in a private field: it is not enumerable, not in JSON.stringify or util.inspect
 * output, so a log line that prints a key prints only its public half.
 */
export class SigningKey {
  readonly #seed: Uint8Array;
  readonly kid: string;
  readonly publicKey: Uint8Array;
  readonly notBefore: number;
  readonly notAfter: number | null;

  constructor(seed: Uint8Array, notBefore: number, notAfter: number | null) {
    this.#seed = seed;
    this.publicKey = publicKeyFromSeed(seed);
    this.kid = jwkThumbprint(this.publicKey);
    this.notBefore = notBefore;
    this.notAfter = notAfter;
  }

  sign(message: Uint8Array): Uint8Array {
    return signBytes(message, this.#seed);
  }

  /** For the note signer only, which needs the raw seed; never serialised. */
  seedForSigning(): Uint8Array {
    return this.#seed;
  }

  isValidAt(seconds: number): boolean {
    return seconds >= this.notBefore && (this.notAfter === null || seconds <= this.notAfter);
  }

  toJSON(): { kid: string; nbf: number; exp: number | null } {
    return { kid: this.kid, nbf: this.notBefore, exp: this.notAfter };
  }

  toStored(): StoredKey {
    return { kid: this.kid, x: toBase64Url(this.publicKey), d: toBase64Url(this.#seed), nbf: this.notBefore, exp: this.notAfter };
  }

  publicJwk(): PublicJwk {
    return {
      kty: 'OKP',
      crv: 'Ed25519',
      x: toBase64Url(this.publicKey),
      kid: this.kid,
      alg: 'EdDSA',
      use: 'sig',
      nbf: this.notBefore,
      ...(this.notAfter === null ? {} : { exp: this.notAfter }),
    };
  }

  verificationKey(): VerificationKey {
    return { kid: this.kid, publicKey: this.publicKey, notBefore: this.notBefore, notAfter: this.notAfter };
  }
}

function invalid(file: string, why: string): NotaryError {
  return new NotaryError('receipt_key_invalid', `receipt key file ${file}: ${why}`);
}

function checkPermissions(file: string, stats: Stats): void {
  if (!stats.isFile()) throw invalid(file, 'is not a regular file');
  if ((stats.mode & 0o077) !== 0) {
    throw new NotaryError(
      'receipt_key_insecure',
      `receipt key file ${file} is accessible to other users (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}); ` +
        `it holds private keys: run chmod 600 ${file}`,
    );
  }
}

function parseKeyring(file: string, text: string): SigningKey[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw invalid(file, 'is not valid JSON (corrupted or truncated?)');
  }
  if (typeof doc !== 'object' || doc === null || (doc as KeyringDocument).format !== KEYRING_FORMAT || !Array.isArray((doc as KeyringDocument).keys)) {
    throw invalid(file, `is not a ${KEYRING_FORMAT} document`);
  }
  const keys: SigningKey[] = [];
  for (const [i, stored] of (doc as KeyringDocument).keys.entries()) {
    const seed = typeof stored?.d === 'string' ? fromBase64Url(stored.d) : null;
    if (!seed || seed.length !== ED25519_SEED_LENGTH) throw invalid(file, `key ${i}: "d" is not a 32-byte base64url Ed25519 seed`);
    if (!Number.isSafeInteger(stored.nbf)) throw invalid(file, `key ${i}: "nbf" is not an integer`);
    if (stored.exp !== null && (!Number.isSafeInteger(stored.exp) || stored.exp < stored.nbf)) throw invalid(file, `key ${i}: "exp" must be null or an integer not before "nbf"`);
    const key = new SigningKey(seed, stored.nbf, stored.exp);
    const x = typeof stored.x === 'string' ? fromBase64Url(stored.x) : null;
    if (!x || !bytesEqual(x, key.publicKey)) throw invalid(file, `key ${i}: "x" is not the public key of "d"`);
    if (stored.kid !== key.kid) throw invalid(file, `key ${i}: "kid" is not the RFC 7638 thumbprint of the key`);
    if (keys.some((k) => k.kid === key.kid)) throw invalid(file, `key ${key.kid} is listed twice`);
    keys.push(key);
  }
  const current = keys.filter((k) => k.notAfter === null);
  if (current.length !== 1) throw invalid(file, `must have exactly one current key (without "exp"), found ${current.length}`);
  return keys;
}

function stampOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.mode}`;
}

function writeKeyringFile(file: string, keys: SigningKey[], exclusive: boolean): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const doc: KeyringDocument = { format: KEYRING_FORMAT, keys: keys.map((k) => k.toStored()) };
  const bytes = `${JSON.stringify(doc, null, 2)}\n`;
  const target = exclusive ? file : `${file}.${process.pid}.tmp`;
  const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | (exclusive ? constants.O_EXCL : constants.O_TRUNC), 0o600);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (!exclusive) renameSync(target, file);
}

export interface KeyringOptions {
  /** Create the file with one fresh key when it does not exist (the data-folder default); a configured file must exist. */
  createIfMissing: boolean;
  now?: () => Date;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * The receipt signing keys, backed by a 0600 JSON file. The file is re-read whenever it changes on disk (a stat per
 * use), so `notary receipts rotate-key` takes effect in a running server without a restart, and a file that turns
 * unreadable, corrupted or world-readable stops signing rather than signing with a stale key.
 */
export class ReceiptKeyring {
  private keys: SigningKey[] = [];
  private stamp = '';
  private readonly now: () => Date;

  private constructor(readonly file: string, now: () => Date) {
    this.now = now;
  }

  static open(file: string, options: KeyringOptions): ReceiptKeyring {
    const keyring = new ReceiptKeyring(path.resolve(file), options.now ?? (() => new Date()));
    let exists = true;
    try {
      statSync(keyring.file);
    } catch {
      exists = false;
    }
    if (!exists) {
      if (!options.createIfMissing) throw invalid(keyring.file, 'does not exist (create it with `notary receipts rotate-key`)');
      try {
        writeKeyringFile(keyring.file, [new SigningKey(generateSeed(), seconds(keyring.now()), null)], true);
      } catch (err) {
        // Another process created it first: use theirs.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    keyring.refresh();
    return keyring;
  }

  /** Re-reads the file when it changed since the last read; throws when it is now unusable. */
  refresh(): void {
    let stats: Stats;
    try {
      stats = statSync(this.file);
    } catch {
      this.stamp = '';
      throw invalid(this.file, 'can no longer be read (was it removed?)');
    }
    const stamp = stampOf(stats);
    if (stamp === this.stamp) return;
    this.stamp = '';
    checkPermissions(this.file, stats);
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      throw invalid(this.file, `cannot be read: ${(err as Error).message}`);
    }
    this.keys = parseKeyring(this.file, text);
    this.stamp = stamp;
  }

  /** The key that signs now. */
  current(): SigningKey {
    this.refresh();
    const key = this.keys.find((k) => k.notAfter === null);
    if (!key) throw invalid(this.file, 'has no current key');
    return key;
  }

  all(): SigningKey[] {
    this.refresh();
    return [...this.keys];
  }

  /** The published key set: the current key and every retired one, each with its validity window. */
  jwks(): Jwks {
    return { keys: this.all().map((k) => k.publicJwk()) };
  }

  verificationKeys(): VerificationKey[] {
    return this.all().map((k) => k.verificationKey());
  }

  /**
   * Writes `keys` as the whole keyring file (atomically, 0600), e.g. keys carried over from an older file format.
   * Exactly one of them must be current (no `notAfter`).
   */
  static write(file: string, keys: SigningKey[]): void {
    const resolved = path.resolve(file);
    const current = keys.filter((k) => k.notAfter === null);
    if (current.length !== 1) throw invalid(resolved, `must have exactly one current key (without "exp"), given ${current.length}`);
    writeKeyringFile(resolved, keys, false);
  }

  /**
   * Makes a fresh current key and retires the previous one (its window closes now; receipts it signed keep
   * verifying). Creates the file when it does not exist yet. The write is atomic (a 0600 temporary file renamed
   * over the old one).
   */
  static rotate(file: string, now: Date = new Date()): { current: SigningKey; retired: SigningKey | null } {
    const resolved = path.resolve(file);
    let keys: SigningKey[] = [];
    let exists = true;
    try {
      statSync(resolved);
    } catch {
      exists = false;
    }
    if (exists) {
      const keyring = new ReceiptKeyring(resolved, () => now);
      keyring.refresh();
      keys = keyring.keys;
    }
    const previous = keys.find((k) => k.notAfter === null) ?? null;
    const nowSeconds = seconds(now);
    const retired = previous ? new SigningKey(previous.seedForSigning(), previous.notBefore, Math.max(previous.notBefore, Math.ceil(now.getTime() / 1000))) : null;
    const current = new SigningKey(generateSeed(), nowSeconds, null);
    const next = keys.map((k) => (previous && k.kid === previous.kid && retired ? retired : k));
    next.push(current);
    writeKeyringFile(resolved, next, false);
    return { current, retired };
  }
}
