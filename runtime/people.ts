import type { Kysely } from 'kysely';
import { PasswordHasher, Sessions, SigninThrottle, SignupLimit, Users } from '../accounts/index.js';
import type { NotaryConfig } from '../core/index.js';
import type { Database } from '../storage/index.js';
import { UsersRepository } from '../storage/index.js';

/** People who sign in to the dashboard and their sessions, with the dashboard section's throttles and lifetimes. */
export function dashboardPeople(config: NotaryConfig, db: Kysely<Database>): { users: Users; sessions: Sessions } {
  const dashboard = config.dashboard;
  const people = new UsersRepository(db);
  const throttle = new SigninThrottle(people, {
    maxFailures: dashboard.signin.max_failures,
    maxFailuresPerAddress: dashboard.signin.max_failures_per_address,
    lockoutMs: dashboard.signin.lockout_s * 1000,
    lockoutMaxMs: dashboard.signin.lockout_max_s * 1000,
    windowMs: dashboard.signin.window_minutes * 60_000,
  });
  const users = new Users(people, new PasswordHasher({ logN: dashboard.scrypt_log_n, r: 8, p: 1 }), throttle, {
    passwordMinLength: dashboard.password_min_length,
    signup: dashboard.signup,
    signupCredits: dashboard.signup_credits,
    defaultTier: config.default_tier,
    signupLimit: new SignupLimit(people, { maxPerAddress: dashboard.signup_limit.max_per_address, windowMs: dashboard.signup_limit.window_minutes * 60_000 }),
  });
  const sessions = new Sessions(people, { ttlMs: dashboard.session_hours * 3_600_000, idleMs: dashboard.session_idle_hours * 3_600_000 });
  return { users, sessions };
}
