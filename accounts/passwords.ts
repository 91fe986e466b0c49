import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { NotaryError } from '../core/index.js';

/** scrypt parameters of a stored hash. */
export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  logN: number;
  r: number;
  p: number;
}

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const N = 2 ** params.logN;
  // scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is below OWASP's N = 2^17.
  const options: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 256 * N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/**
 * Password hashing with scrypt (node:crypto, OpenSSL's implementation): a random 16-byte salt per password, the
 * parameters stored beside the hash (`$scrypt$ln=17,r=8,p=1$<salt>$<hash>`, base64 without padding) so they can be
 * raised later, and a constant-time comparison. Runs on libuv's thread pool, off the event loop.
 */
export class PasswordHasher {
  constructor(readonly params: ScryptParams = { logN: 17, r: 8, p: 1 }) {}

  async hash(password: string): Promise<string> {
    if (password.length > MAX_PASSWORD_LENGTH) throw new NotaryError('weak_password', `passwords are at most ${MAX_PASSWORD_LENGTH} characters`);
    const salt = randomBytes(SALT_LENGTH);
    const key = await derive(password, salt, this.params);
    const { logN, r, p } = this.params;
    return `$scrypt$ln=${logN},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
  }

  /** Whether `password` matches `stored`; false (never an exception) for a malformed stored value or an over-long password. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = FORMAT.exec(stored);
    if (!parsed || password.length > MAX_PASSWORD_LENGTH) return false;
    const params = { logN: Number(parsed[1]), r: Number(parsed[2]), p: Number(parsed[3]) };
    if (params.logN < 10 || params.logN > 22 || params.r < 1 || params.p < 1) return false;
    const expected = Buffer.from(parsed[5] ?? '', 'base64');
    const key = await derive(password, Buffer.from(parsed[4] ?? '', 'base64'), params);
    return expected.length === key.length && timingSafeEqual(expected, key);
  }

  /** A stored hash made with weaker parameters than today's: rehash it at the next successful sign-in. */
  needsRehash(stored: string): boolean {
    const parsed = FORMAT.exec(stored);
    if (!parsed) return true;
    return Number(parsed[1]) < this.params.logN || Number(parsed[2]) !== this.params.r || Number(parsed[3]) !== this.params.p;
  }
}

/** Well-known passwords of the allowed length that are refused outright (the first guesses of any attacker). */
const COMMON = new Set([
  '1234567890', '12345678910', '123456789012', '0123456789', '9876543210', 'qwertyuiop', 'qwertyuiop1', 'password12',
  'password123', 'password1234', 'passw0rd123', 'iloveyou12', 'abcdefghij', '1q2w3e4r5t', '1qaz2wsx3edc', 'qazwsxedcrfv',
  'letmein123', 'welcome123', 'administrator', 'changeme123', 'trustno1234', 'football123', 'baseball123', 'sunshine123',
  'princess123', 'dragon1234', 'monkey1234', 'superman123', 'asdfghjkl1', 'zxcvbnm123', 'aaaaaaaaaa', '1111111111',
]);

/** Length bounds, not the email, not one repeated character, not a well-known password. Throws weak_password. */
export function checkPasswordPolicy(password: string, options: { minLength: number; email?: string }): void {
  if (typeof password !== 'string' || password.length < options.minLength) {
    throw new NotaryError('weak_password', `the password must be at least ${options.minLength} characters long`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) throw new NotaryError('weak_password', `the password must be at most ${MAX_PASSWORD_LENGTH} characters long`);
  const lower = password.toLowerCase();
  if (options.email && lower === options.email.toLowerCase()) throw new NotaryError('weak_password', 'the password must not be the email address');
  if (new Set(password).size === 1 || COMMON.has(lower)) throw new NotaryError('weak_password', 'this password is among the first an attacker tries; choose another');
}
