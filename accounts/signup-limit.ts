import { NotaryError } from '../core/index.js';
import { nowIso } from '../storage/index.js';
import type { UsersRepository } from '../storage/index.js';

export interface SignupLimitOptions {
  /** Sign-ups from one client address within the window; 0 turns the limit off. */
  maxPerAddress: number;
  windowMs: number;
  now?: () => number;
}

/**
 * Sign-ups per client address, counted in the database (the sign-in failures table, key `signup:<address>`) so that
 * every node counts the same. Each attempt is counted in one upsert before the account is made, so a burst of
 * concurrent sign-ups from one address cannot slip past the count; refused attempts count too.
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
    const now = this.now();
    const { count, since } = await this.repository.countAttempt(`signup:${address}`, nowIso(new Date(now)), nowIso(new Date(now - this.options.windowMs)));
    if (count <= this.options.maxPerAddress) return;
    const seconds = Math.max(1, Math.ceil((Date.parse(since) + this.options.windowMs - now) / 1000));
    throw new NotaryError(
      'signup_throttled',
      `This address has used its ${this.options.maxPerAddress} sign-ups for the last ${Math.round(this.options.windowMs / 60_000)} minutes (dashboard.signup_limit.max_per_address); try again in ${seconds} s`,
      { retry_after_s: seconds },
      { 'Retry-After': String(seconds) },
    );
  }
}
