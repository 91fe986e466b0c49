import { randomBytes } from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tokensEqual, type Session } from '../../accounts/index.js';
import type { NotaryConfig } from '../../core/index.js';
import { NotaryError } from '../../core/index.js';
import type { User } from '../../storage/index.js';

/** The session cookie: HttpOnly, SameSite=Strict, scoped to /dashboard, Secure when served over TLS (or always, by config). */
export const SESSION_COOKIE = 'notary_session';
export const COOKIE_PATH = '/dashboard';
/** The header every state-changing dashboard request carries (the session's CSRF token). */
export const CSRF_HEADER = 'x-csrf-token';

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session of the request's cookie, when it is live. */
    dashboardSession: Session | null;
  }
}

/**
 * The signed-out visitor's CSRF cookie (double submit): GET /session without a session sets it and returns the same
 * random value as csrf_token; a sign-in or sign-up then carries it in X-CSRF-Token. Nothing is stored server-side, so
 * reading the session page writes no row: a session row is made only by signing in or up.
 */
export const PRE_SESSION_COOKIE = 'notary_csrf';

function cookieValue(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  return parseCookie(header)[name];
}

export function sessionToken(request: FastifyRequest): string | undefined {
  return cookieValue(request, SESSION_COOKIE);
}

/** The signed-out visitor's CSRF token: the one its cookie already holds, else a new one set on the reply. */
export function preSessionToken(request: FastifyRequest, reply: FastifyReply, config: NotaryConfig): string {
  const existing = cookieValue(request, PRE_SESSION_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  reply.header(
    'Set-Cookie',
    stringifySetCookie({ name: PRE_SESSION_COOKIE, value: token, path: COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure: secureCookie(request, config.dashboard.secure_cookies) }),
  );
  return token;
}

/** Whether the session cookie gets the Secure attribute for this request. */
export function secureCookie(request: FastifyRequest, mode: NotaryConfig['dashboard']['secure_cookies']): boolean {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  return request.protocol === 'https';
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, config: NotaryConfig, token: string, expiresAt: string): void {
  reply.header(
    'Set-Cookie',
    stringifySetCookie({
      name: SESSION_COOKIE,
      value: token,
      path: COOKIE_PATH,
      httpOnly: true,
      sameSite: 'strict',
      secure: secureCookie(request, config.dashboard.secure_cookies),
      expires: new Date(expiresAt),
    }),
  );
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, config: NotaryConfig): void {
  reply.header(
    'Set-Cookie',
    stringifySetCookie({
      name: SESSION_COOKIE,
      value: '',
      path: COOKIE_PATH,
      httpOnly: true,
      sameSite: 'strict',
      secure: secureCookie(request, config.dashboard.secure_cookies),
      maxAge: 0,
    }),
  );
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF protection of a state-changing request: it must carry this session's token in X-CSRF-Token (a synchronizer
 * token, compared in constant time), and must not come from another site (Origin, when sent, is this server;
 * Sec-Fetch-Site, when sent, is same-origin). The cookie is SameSite=Strict besides, and bodies are JSON only.
 */
export function checkCsrf(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`) {
    throw new NotaryError('csrf_failed', `Requests from ${origin.slice(0, 100)} are refused: the dashboard accepts changes from its own pages only`);
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new NotaryError('csrf_failed', 'Cross-site requests are refused: the dashboard accepts changes from its own pages only');
  }
  const token = request.headers[CSRF_HEADER];
  const session = request.dashboardSession;
  if (!session) {
    // Signed out: the token must be the one of the visitor's CSRF cookie (double submit).
    const cookie = cookieValue(request, PRE_SESSION_COOKIE);
    if (cookie === undefined) throw new NotaryError('csrf_failed', 'No session: load the dashboard (GET /dashboard/api/v1/session) to get a CSRF token first');
    if (typeof token !== 'string' || !tokensEqual(token, cookie)) throw new NotaryError('csrf_failed', `The ${CSRF_HEADER} header is missing or is not the token GET /dashboard/api/v1/session gave`);
    return;
  }
  if (typeof token !== 'string' || !tokensEqual(token, session.csrfToken)) {
    throw new NotaryError('csrf_failed', `The ${CSRF_HEADER} header is missing or is not this session's token`);
  }
}

/** The signed-in user, or 401 session_required. */
export function requireUser(request: FastifyRequest): User {
  const user = request.dashboardSession?.user;
  if (!user) throw new NotaryError('session_required', 'Sign in to the dashboard first');
  return user;
}

/** A member and the tenant it belongs to; operators have no tenant pages. */
export function requireMember(request: FastifyRequest): User & { tenant_id: string } {
  const user = requireUser(request);
  if (user.role !== 'member' || user.tenant_id === null) throw new NotaryError('forbidden', 'These pages belong to a tenant; operators have none');
  return user as User & { tenant_id: string };
}

export function requireOperator(request: FastifyRequest): User {
  const user = requireUser(request);
  if (user.role !== 'operator') throw new NotaryError('operator_only', 'Only operators may do this');
  return user;
}
