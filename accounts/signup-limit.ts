import { NotaryError } from '../core/errors.js';
import { nowIso } from '../storage/db.js';
import type { UsersRepository } from '../storage/users.js';

export interface SignupLimitOptions {
  /** Sign-ups from one client address within the window; 0 turns the limit off. */
  maxPerAddress: number;
  windowMs: number;
  now?: () => number;
}

/**
 * Sign-ups per client address, counted in the database (the sign-in failures table, key `signup:<address>`) so that
 * every node counts the same. An attempt is counted before the account is made, so a burst of concurrent sign-ups
 * from one address cannot slip past the count between check and insert.
 */
export class SignupLimit {
  private readonly now: () => number;

  constructor(
    private readonly repository: UsersRepository,
    private readonly options: SignupLimitOptions,
  ) {
    this.now = options.now ?? (() => Date.now());
  }

  /** Counts one sign-up from this address, or throws signup_throttled (with Retry-After) when it has had its share. */
  async take(address: string): Promise<void> {
    if (this.options.maxPerAddress <= 0) return;
    const key = `signup:${address}`;
    const now = this.now();
    const [row] = await this.repository.failures([key]);
    const fresh = !row || now - Date.parse(row.first_failure_at) > this.options.windowMs;
    const count = fresh ? 0 : row.failures;
    if (count >= this.options.maxPerAddress && row) {
      const seconds = Math.max(1, Math.ceil((Date.parse(row.first_failure_at) + this.options.windowMs - now) / 1000));
      throw new NotaryError(
        'signup_throttled',
        `This address created ${count} accounts in the last ${Math.round(this.options.windowMs / 60_000)} minutes (dashboard.signup_limit.max_per_address); try again in ${seconds} s`,
        { retry_after_s: seconds },
        { 'Retry-After': String(seconds) },
      );
    }
    await this.repository.putFailure({
      key,
      failures: count + 1,
      first_failure_at: fresh ? nowIso(new Date(now)) : (row as { first_failure_at: string }).first_failure_at,
      last_failure_at: nowIso(new Date(now)),
      locked_until: null,
    });
  }
}
