import { NotaryError, newId } from '../core/index.js';
import type { Tenant, User, UserRole, UsersRepository } from '../storage/index.js';
import { checkPasswordPolicy, type PasswordHasher } from './passwords.js';
import type { SignupLimit } from './signup-limit.js';
import type { SigninThrottle } from './throttle.js';

export type { User, UserRole } from '../storage/index.js';

export interface UsersOptions {
  passwordMinLength: number;
  /** Whether anyone may sign up (a new tenant each), or only operators create accounts. */
  signup: 'open' | 'closed';
  /** Opening balance of a tenant made by sign-up (`dashboard.signup_credits`). */
  signupCredits: number;
  defaultTier: string;
  /** Sign-ups per client address (`dashboard.signup_limit`); without it, unlimited. */
  signupLimit?: SignupLimit;
}

/** A user as it may be shown: never the password hash. */
export interface PublicUser {
  id: string;
  email: string;
  role: UserRole;
  tenant_id: string | null;
  created_at: string;
  last_signin_at: string | null;
}

export function publicUser(user: User): PublicUser {
  return { id: user.id, email: user.email, role: user.role, tenant_id: user.tenant_id, created_at: user.created_at, last_signin_at: user.last_signin_at };
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@.]{2,63}$/;

/** Trimmed and lower-cased; throws invalid_request unless it looks like an address. */
export function normalizeEmail(raw: unknown): string {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (!EMAIL.test(email) || email.length > 254) throw new NotaryError('invalid_request', 'email must be an email address such as ada@example.org');
  return email;
}

/**
 * Accounts of people: sign-up (a member and its own tenant), sign-in (throttled; the same work and answer whether the
 * email exists or not), password changes, and operators (created from the command line).
 */
export class Users {
  /** Verified against when the email is unknown, so that case costs one scrypt like a wrong password does. */
  private dummyHash: Promise<string> | undefined;

  constructor(
    readonly repository: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly throttle: SigninThrottle,
    private readonly options: UsersOptions,
  ) {}

  get signupOpen(): boolean {
    return this.options.signup === 'open';
  }

  async get(userId: string): Promise<User> {
    const user = await this.repository.getUser(userId);
    if (!user) throw new NotaryError('user_not_found', `no user with id ${userId}`);
    return user;
  }

  /** A new member with a tenant of its own (named `organisation`, or the email) on the default tier with the sign-up credits. */
  async signUp(input: { email: unknown; password: unknown; organisation?: unknown }, clientAddress?: string): Promise<{ user: User; tenant: Tenant }> {
    if (!this.signupOpen) throw new NotaryError('signup_closed', 'Sign-up is closed on this server: ask its operator for an account');
    if (clientAddress !== undefined) await this.options.signupLimit?.take(clientAddress);
    const email = normalizeEmail(input.email);
    const password = typeof input.password === 'string' ? input.password : '';
    checkPasswordPolicy(password, { minLength: this.options.passwordMinLength, email });
    const organisation = typeof input.organisation === 'string' ? input.organisation.trim() : '';
    if (organisation.length > 100) throw new NotaryError('invalid_request', 'organisation is at most 100 characters');
    if (await this.repository.getUserByEmail(email)) throw new NotaryError('email_taken', 'An account with this email exists already: sign in instead');
    const passwordHash = await this.hasher.hash(password);
    const created = await this.repository.insertMemberWithTenant({
      user: { id: newId('usr'), email, password_hash: passwordHash },
      tenant: { id: newId('ten'), name: organisation || email, tier: this.options.defaultTier, credits: this.options.signupCredits },
    });
    if (created.ok) return { user: created.user, tenant: created.tenant };
    if (created.reason === 'email_taken') throw new NotaryError('email_taken', 'An account with this email exists already: sign in instead');
    throw new NotaryError('tenant_exists', `An organisation named "${organisation || email}" exists already: choose another name`);
  }

  /**
   * The user whose email and password these are. Throttled per email and per client address before any password is
   * checked; a failure is invalid_credentials whether the email exists or not.
   */
  async signIn(input: { email: unknown; password: unknown }, clientAddress: string): Promise<User> {
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase().slice(0, 254) : '';
    const password = typeof input.password === 'string' ? input.password : '';
    await this.throttle.check(email, clientAddress);
    const user = email ? await this.repository.getUserByEmail(email) : undefined;
    const ok = user ? await this.hasher.verify(password, user.password_hash) : (await this.hasher.verify(password, await this.dummy()), false);
    if (!user || !ok) {
      await this.throttle.failed(email, clientAddress);
      throw new NotaryError('invalid_credentials', 'The email or password is wrong');
    }
    await this.throttle.succeeded(email);
    const rehash = this.hasher.needsRehash(user.password_hash) ? await this.hasher.hash(password) : undefined;
    await this.repository.markSignedIn(user.id, rehash);
    return user;
  }

  /** Checks the current password (throttled like a sign-in), then stores the new one. */
  async changePassword(user: User, current: unknown, next: unknown, clientAddress: string): Promise<void> {
    await this.throttle.check(user.email, clientAddress);
    if (typeof current !== 'string' || !(await this.hasher.verify(current, user.password_hash))) {
      await this.throttle.failed(user.email, clientAddress);
      throw new NotaryError('invalid_credentials', 'The current password is wrong');
    }
    const password = typeof next === 'string' ? next : '';
    checkPasswordPolicy(password, { minLength: this.options.passwordMinLength, email: user.email });
    if (password === current) throw new NotaryError('weak_password', 'the new password must differ from the current one');
    await this.repository.setPassword(user.id, await this.hasher.hash(password));
  }

  /** An operator (no tenant): `notary admin create`. */
  async createOperator(emailInput: unknown, password: string): Promise<User> {
    const email = normalizeEmail(emailInput);
    checkPasswordPolicy(password, { minLength: this.options.passwordMinLength, email });
    const user = await this.repository.insertUser({ id: newId('usr'), email, password_hash: await this.hasher.hash(password), role: 'operator', tenant_id: null });
    if (!user) throw new NotaryError('email_taken', `an account with the email ${email} exists already`);
    return user;
  }

  async list(filter: { tenantId?: string; role?: UserRole } = {}): Promise<User[]> {
    return this.repository.listUsers(filter);
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= this.hasher.hash('not a password anyone has');
    return this.dummyHash;
  }
}
