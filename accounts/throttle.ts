import { NotaryError } from '../core/index.js';
import { nowIso } from '../storage/index.js';
import type { UsersRepository } from '../storage/index.js';

export interface ThrottleOptions {
  /** Failures of one email before it is locked. */
  maxFailures: number;
  /** Failures from one client address (any email) before it is locked. */
  maxFailuresPerAddress: number;
  /** First lockout; it doubles with each further failure, up to lockoutMaxMs. */
  lockoutMs: number;
  lockoutMaxMs: number;
  /** Failures older than this are forgotten. */
  windowMs: number;
  now?: () => number;
}

/**
 * Sign-in throttling, kept in the database so every node counts the same failures: after `maxFailures` failed
 * attempts for one email (or `maxFailuresPerAddress` from one address) further attempts are refused with 429 before
 * any password is checked, for a lockout that doubles with each failure. Unknown emails count like known ones, so
 * throttling tells nothing about which accounts exist.
 */
export class SigninThrottle {
  private readonly now: () => number;

  constructor(
    private readonly repository: UsersRepository,
    private readonly options: ThrottleOptions,
  ) {
    this.now = options.now ?? (() => Date.now());
  }

  private keys(email: string, address: string): string[] {
    return [`email:${email}`, `ip:${address}`];
  }

  /** Throws signin_throttled (with Retry-After) when the email or the address is locked out now. */
  async check(email: string, address: string): Promise<void> {
    const now = this.now();
    let until = 0;
    for (const row of await this.repository.failures(this.keys(email, address))) {
      if (row.locked_until !== null) until = Math.max(until, Date.parse(row.locked_until));
    }
    if (until > now) {
      const seconds = Math.max(1, Math.ceil((until - now) / 1000));
      throw new NotaryError('signin_throttled', `Too many failed sign-ins; try again in ${seconds} s`, { retry_after_s: seconds }, { 'Retry-After': String(seconds) });
    }
  }

  async failed(email: string, address: string): Promise<void> {
    const now = this.now();
    const [emailKey, addressKey] = this.keys(email, address);
    const rows = new Map((await this.repository.failures([emailKey!, addressKey!])).map((row) => [row.key, row]));
    for (const [key, limit] of [
      [emailKey!, this.options.maxFailures],
      [addressKey!, this.options.maxFailuresPerAddress],
    ] as const) {
      const previous = rows.get(key);
      const fresh = !previous || now - Date.parse(previous.last_failure_at) > this.options.windowMs;
      const failures = fresh ? 1 : previous.failures + 1;
      const over = failures - limit;
      const lockMs = over >= 0 ? Math.min(this.options.lockoutMs * 2 ** Math.min(over, 20), this.options.lockoutMaxMs) : 0;
      await this.repository.putFailure({
        key,
        failures,
        first_failure_at: fresh ? nowIso(new Date(now)) : previous.first_failure_at,
        last_failure_at: nowIso(new Date(now)),
        locked_until: lockMs > 0 ? nowIso(new Date(now + lockMs)) : null,
      });
    }
  }

  /** A successful sign-in clears the email's failures (not the address's: one good account must not unlock guessing at others). */
  async succeeded(email: string): Promise<void> {
    await this.repository.clearFailures(`email:${email}`);
  }
}
