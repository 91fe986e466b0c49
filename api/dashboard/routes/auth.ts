import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { publicUser, type Session } from '../../../accounts/index.js';
import type { User } from '../../../storage/index.js';
import type { DashboardDeps } from '../deps.js';
import { clearSessionCookie, preSessionToken, requireUser, setSessionCookie } from '../session.js';

const credentials = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: 1024 } },
} as const;

function sessionBody(deps: DashboardDeps, session: Session | null) {
  return {
    user: session?.user ? publicUser(session.user) : null,
    csrf_token: session?.csrfToken ?? null,
    signup: deps.config.dashboard.signup,
    password_min_length: deps.config.dashboard.password_min_length,
  };
}

function client(request: FastifyRequest) {
  return { address: request.ip, userAgent: request.headers['user-agent'] ?? '' };
}

/**
 * Sign-up, sign-in, sign-out and password changes. Signing in (or up) always ends the session the request came with
 * and starts a new one with a new id and a new CSRF token, so a session id planted before sign-in is worthless.
 */
export async function authRoutes(app: FastifyInstance, { deps }: { deps: DashboardDeps }): Promise<void> {
  const startSession = async (request: FastifyRequest, reply: FastifyReply, user: User) => {
    if (request.dashboardSession) await deps.sessions.destroy(request.dashboardSession.id);
    const session = await deps.sessions.create(user, client(request));
    setSessionCookie(request, reply, deps.config, session.token, session.expiresAt);
    return sessionBody(deps, session);
  };

  // The current session; a visitor without one gets the CSRF token of the forms in a cookie (no session row: those
  // are made by signing in or up).
  app.get('/session', async (request, reply) => {
    if (request.dashboardSession) return sessionBody(deps, request.dashboardSession);
    return { ...sessionBody(deps, null), csrf_token: preSessionToken(request, reply, deps.config) };
  });

  app.post(
    '/signup',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['email', 'password'],
          properties: { ...credentials.properties, organisation: { type: 'string', maxLength: 100 } },
        },
      },
    },
    async (request, reply) => {
      const { user } = await deps.users.signUp(request.body as { email: string; password: string; organisation?: string }, request.ip);
      reply.code(201);
      return startSession(request, reply, user);
    },
  );

  app.post('/signin', { schema: { body: credentials } }, async (request, reply) => {
    const user = await deps.users.signIn(request.body as { email: string; password: string }, request.ip);
    return startSession(request, reply, user);
  });

  app.post('/signout', async (request, reply) => {
    if (request.dashboardSession) await deps.sessions.destroy(request.dashboardSession.id);
    clearSessionCookie(request, reply, deps.config);
    return { signed_out: true };
  });

  app.post(
    '/password',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['current_password', 'new_password'],
          properties: { current_password: { type: 'string', maxLength: 1024 }, new_password: { type: 'string', maxLength: 1024 } },
        },
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const body = request.body as { current_password: string; new_password: string };
      await deps.users.changePassword(user, body.current_password, body.new_password, request.ip);
      // Every session of the user ends, this one included; this device gets a new one.
      await deps.sessions.destroyForUser(user.id);
      const fresh = await deps.users.get(user.id);
      const session = await deps.sessions.create(fresh, client(request));
      setSessionCookie(request, reply, deps.config, session.token, session.expiresAt);
      return { ...sessionBody(deps, session), other_sessions_ended: true };
    },
  );
}
