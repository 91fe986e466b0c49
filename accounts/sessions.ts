import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { nowIso } from '../storage/index.js';
import type { SessionRow, User, UsersRepository } from '../storage/index.js';

export interface SessionOptions {
  /** Absolute lifetime of a signed-in session. */
  ttlMs: number;
  /** A session unused for this long ends. */
  idleMs: number;
  /** Lifetime of a signed-out visitor's session (it only carries the sign-in form's CSRF token). */
  anonymousTtlMs?: number;
  now?: () => number;
}

/** A live session: its token is only ever in the cookie, the database has its SHA-256. */
export interface Session {
  id: string;
  user: User | null;
  csrfToken: string;
  expiresAt: string;
}

export interface NewSession extends Session {
  /** The cookie value: returned once, never stored. */
  token: string;
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const TOUCH_INTERVAL_MS = 60_000;

export function sessionIdOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time equality of two CSRF tokens (false for different lengths). */
export function tokensEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Dashboard sessions. A session is created for a signed-out visitor too (it carries the CSRF token of the sign-in
 * form), and signing in always replaces it with a new one: a session id that existed before sign-in is never
 * authenticated (no session fixation). Tokens are 256 random bits; only their SHA-256 is stored.
 */
export class Sessions {
  private readonly now: () => number;
  private lastSweep = 0;

  constructor(
    private readonly repository: UsersRepository,
    private readonly options: SessionOptions,
  ) {
    this.now = options.now ?? (() => Date.now());
  }

  async create(user: User | null, client: { address?: string; userAgent?: string } = {}): Promise<NewSession> {
    const now = this.now();
    await this.sweep(now);
    const token = randomBytes(32).toString('base64url');
    const ttl = user ? this.options.ttlMs : (this.options.anonymousTtlMs ?? Math.min(this.options.idleMs, 3_600_000));
    const row: SessionRow = {
      id: sessionIdOf(token),
      user_id: user?.id ?? null,
      csrf_token: randomBytes(32).toString('base64url'),
      created_at: nowIso(new Date(now)),
      expires_at: nowIso(new Date(now + ttl)),
      last_seen_at: nowIso(new Date(now)),
      client_address: client.address?.slice(0, 64) ?? null,
      user_agent: client.userAgent?.slice(0, 256) ?? null,
    };
    await this.repository.insertSession(row);
    return { token, id: row.id, user, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  /** The live session of a cookie value; undefined for a malformed, unknown, expired or idle one. */
  async resolve(token: string | undefined): Promise<Session | undefined> {
    if (token === undefined || !TOKEN.test(token)) return undefined;
    const id = sessionIdOf(token);
    const found = await this.repository.findSession(id);
    if (!found) return undefined;
    const now = this.now();
    const lastSeen = Date.parse(found.session.last_seen_at);
    if (Date.parse(found.session.expires_at) <= now || now - lastSeen >= this.options.idleMs || (found.session.user_id !== null && !found.user)) {
      await this.repository.deleteSession(id);
      return undefined;
    }
    if (now - lastSeen >= TOUCH_INTERVAL_MS) await this.repository.touchSession(id, nowIso(new Date(now)));
    return { id, user: found.user, csrfToken: found.session.csrf_token, expiresAt: found.session.expires_at };
  }

  async destroy(id: string): Promise<void> {
    await this.repository.deleteSession(id);
  }

  /** Ends all of a user's sessions but `exceptId` (after a password change: other devices are signed out). */
  async destroyForUser(userId: string, exceptId?: string): Promise<number> {
    return this.repository.deleteUserSessions(userId, exceptId);
  }

  /** Expired and idle sessions are deleted at most once a minute, as new ones are made. */
  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    await this.repository.deleteExpiredSessions(nowIso(new Date(now)), nowIso(new Date(now - this.options.idleMs)));
  }
}
