import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, PASSWORD, startDashboard, type DashboardHarness } from './support/dashboard.js';

/** Every operator endpoint, with a body where it takes one: a member and a visitor must be refused on each. */
const OPERATOR_ROUTES: Array<[string, string, unknown?]> = [
  ['GET', 'operator/overview'],
  ['GET', 'operator/seeds'],
  ['POST', 'operator/seeds', { url: 'https://example.org/' }],
  ['PATCH', 'operator/seeds/seed_x', { paused: true }],
  ['DELETE', 'operator/seeds/seed_x'],
  ['POST', 'operator/seeds/seed_x/crawl'],
  ['GET', 'operator/crawl'],
  ['GET', 'operator/index'],
  ['GET', 'operator/pricing'],
  ['PUT', 'operator/pricing', { search: { credits_by_depth: [0] } }],
  ['DELETE', 'operator/pricing'],
  ['GET', 'operator/tiers'],
  ['PUT', 'operator/tiers', { tiers: {} }],
  ['DELETE', 'operator/tiers'],
  ['GET', 'operator/tenants'],
  ['POST', 'operator/tenants/ten_x/grant', { credits: 1000 }],
  ['PATCH', 'operator/tenants/ten_x', { tier: 'bulk' }],
  ['GET', 'operator/revenue'],
  ['GET', 'operator/collections'],
  ['POST', 'operator/collections', { name: 'hr' }],
  ['PATCH', 'operator/collections/hr', { public: true }],
  ['GET', 'operator/crawl-jobs'],
  ['PUT', 'operator/tenants/ten_x/collections', { collections: null }],
  ['POST', 'operator/crawl-jobs/crawl_x/cancel'],
];

describe('dashboard security', () => {
  let h: DashboardHarness;

  beforeAll(async () => {
    h = await startDashboard({ dashboard: { signin: { max_failures: 5, lockout_s: 1, max_failures_per_address: 40 } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('CSRF', () => {
    it('a change without the session token, with another session\'s token, from another origin or site, or as a form is refused', async () => {
      const member = await h.member('csrf@example.org');
      const other = await h.member('csrf-other@example.org');
      const refused = [
        await member.post('keys', { name: 'no token' }, { csrf: false }),
        await member.post('keys', { name: 'wrong token' }, { csrf: randomBytes(32).toString('base64url') }),
        await member.post('keys', { name: "another session's token" }, { csrf: other.csrf! }),
        await member.post('keys', { name: 'cross origin' }, { headers: { origin: 'https://evil.example' } }),
        await member.post('keys', { name: 'cross site' }, { headers: { 'sec-fetch-site': 'cross-site' } }),
      ];
      for (const answer of refused) {
        expect(answer.status).toBe(403);
        expect(answer.body['code']).toBe('csrf_failed');
        expect(answer.headers.get('content-type')).toContain('application/problem+json');
      }
      // A form post (what a cross-site page can send without a preflight) is not even parsed.
      const form = await member.request('POST', 'keys', { rawBody: 'name=form', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.status).toBe(415);
      expect((await member.get('keys')).body['keys']).toEqual([]);
      // The same request with its token, from its own origin, goes through.
      const ok = await member.post('keys', { name: 'fine' }, { headers: { origin: h.url } });
      expect(ok.status).toBe(201);
      // Sign-in is protected too (login CSRF): no token, no sign-in, no session.
      const visitor = h.client();
      await visitor.open();
      const forged = await visitor.post('signin', { email: 'csrf@example.org', password: PASSWORD }, { csrf: false });
      expect(forged.status).toBe(403);
      expect((await visitor.get('session')).body['user']).toBeNull();
      // And a request without any session cannot change anything.
      const bare = new DashboardClient(h.url);
      expect((await bare.post('signup', { email: 'x@example.org', password: PASSWORD })).status).toBe(403);
    });
  });

  describe('sessions', () => {
    it('signing in always starts a new session: an id planted before sign-in is worthless (no fixation)', async () => {
      await h.member('fixation@example.org');
      const victim = h.client();
      await victim.open();
      const planted = victim.token!;
      const plantedCsrf = victim.csrf!;
      const signedIn = await victim.signIn('fixation@example.org', PASSWORD);
      expect(signedIn.status).toBe(200);
      expect(victim.token).toBeDefined();
      expect(victim.token).not.toBe(planted);
      expect(victim.csrf).not.toBe(plantedCsrf);
      // The attacker, holding the planted id, has no session at all.
      const attacker = h.client();
      attacker.cookie = `notary_session=${planted}`;
      const seen = await attacker.get('session');
      expect(seen.body['user']).toBeNull();
      expect(attacker.token).not.toBe(planted);
      expect((await attacker.get('keys')).status).toBe(401);
      // A made-up id in the cookie is never adopted either: the server issues its own.
      const madeUp = randomBytes(32).toString('base64url');
      const guesser = h.client();
      guesser.cookie = `notary_session=${madeUp}`;
      await guesser.get('session');
      expect(guesser.token).not.toBe(madeUp);
      // The victim's new session works.
      expect((await victim.get('keys')).status).toBe(200);
    });

    it('the cookie is HttpOnly, SameSite=Strict, scoped to /dashboard; Secure when configured (and not from a forged X-Forwarded-Proto)', async () => {
      const visitor = h.client();
      const answer = await visitor.get('session', { headers: { 'x-forwarded-proto': 'https' } });
      // Signed out: only the CSRF cookie of the forms (no session row); signing up sets the session cookie.
      const signedOut = answer.headers.get('set-cookie') ?? '';
      expect(signedOut).toMatch(/^notary_csrf=[A-Za-z0-9_-]{43};/);
      const signedUp = await visitor.post('signup', { email: 'cookie-attributes@example.org', password: PASSWORD }, { headers: { 'x-forwarded-proto': 'https' } });
      expect(signedUp.status, signedUp.text).toBe(201);
      const session = signedUp.headers.get('set-cookie') ?? '';
      expect(session).toMatch(/^notary_session=[A-Za-z0-9_-]{43};/);
      for (const cookie of [signedOut, session]) {
        expect(cookie).toContain('HttpOnly');
        expect(cookie).toContain('SameSite=Strict');
        expect(cookie).toContain('Path=/dashboard');
        expect(cookie).not.toContain('Secure');
      }
      const secure = await startDashboard({ dashboard: { secure_cookies: 'always' } });
      try {
        const over = await secure.client().get('session');
        expect(over.headers.get('set-cookie')).toContain('Secure');
      } finally {
        await secure.close();
      }
    });

    it('sign-out ends the session; a password change ends every other session and the old password', async () => {
      const laptop = await h.member('sessions@example.org');
      const phone = h.client();
      expect((await phone.signIn('sessions@example.org', PASSWORD)).status).toBe(200);
      const wrong = await laptop.post('password', { current_password: 'not the password', new_password: 'a brand new password' });
      expect(wrong.status).toBe(401);
      expect(wrong.body['code']).toBe('invalid_credentials');
      const weak = await laptop.post('password', { current_password: PASSWORD, new_password: 'short' });
      expect(weak.body['code']).toBe('weak_password');
      const changed = await laptop.post('password', { current_password: PASSWORD, new_password: 'a brand new password' });
      expect(changed.status).toBe(200);
      expect((await laptop.get('keys')).status).toBe(200);
      expect((await phone.get('keys')).status).toBe(401);
      expect((await h.client().signIn('sessions@example.org', PASSWORD)).status).toBe(401);
      expect((await h.client().signIn('sessions@example.org', 'a brand new password')).status).toBe(200);
      const before = laptop.cookie;
      expect((await laptop.post('signout')).status).toBe(200);
      const stale = h.client();
      stale.cookie = before;
      expect((await stale.get('keys')).status).toBe(401);
    });

    it('passwords are stored as scrypt hashes with their parameters, never as given', async () => {
      await h.member('hash@example.org');
      const user = await h.runtime.users.repository.getUserByEmail('hash@example.org');
      expect(user?.password_hash).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
      expect(user?.password_hash).not.toContain(PASSWORD);
    });
  });

  describe('sign-in throttling', () => {
    it('locks an email after 5 failures, refusing even the right password, until the lockout passes', async () => {
      await h.member('throttle@example.org');
      const client = h.client();
      for (let i = 0; i < 5; i++) {
        const failed = await client.signIn('throttle@example.org', `wrong password ${i}`);
        expect(failed.status).toBe(401);
        expect(failed.body['code']).toBe('invalid_credentials');
      }
      const locked = await client.signIn('throttle@example.org', PASSWORD);
      expect(locked.status).toBe(429);
      expect(locked.body['code']).toBe('signin_throttled');
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await sleep(1100);
      expect((await client.signIn('throttle@example.org', PASSWORD)).status).toBe(200);
    });

    it('an unknown email is throttled exactly like a known one (nothing tells which accounts exist)', async () => {
      const client = h.client();
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await client.signIn('nobody@example.org', `guess ${i}`));
      expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429]);
      expect(answers[0]?.body['detail']).toBe('The email or password is wrong');
    });

    it('locks a client address that tries many emails', async () => {
      const spray = await startDashboard({ dashboard: { signin: { max_failures: 50, max_failures_per_address: 4, lockout_s: 60 } } });
      try {
        await spray.member('sprayed@example.org');
        const client = spray.client();
        for (let i = 0; i < 4; i++) expect((await client.signIn(`user${i}@example.org`, 'guess guess guess')).status).toBe(401);
        const locked = await client.signIn('sprayed@example.org', PASSWORD);
        expect(locked.status).toBe(429);
      } finally {
        await spray.close();
      }
    });
  });

  describe('tenant isolation', () => {
    it('a member sees and changes only its own tenant: keys, ledger, usage, party keys', async () => {
      const alice = await h.member('alice@example.org', 'alice-org');
      const bob = await h.member('bob@example.org', 'bob-org');
      const bobKey = await bob.post('keys', { name: 'bob key' });
      const bobKeyId = (bobKey.body['record'] as { id: string }).id;
      const bobSecret = bobKey.body['key'] as string;
      expect((await h.call(bobSecret)).status).toBe(200);
      const x = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x;
      const partyKey = await bob.post('party-keys', { public_key: x, name: 'bob party' });
      expect(partyKey.status).toBe(201);
      const bobParty = (partyKey.body['key'] as { kid: string }).kid;

      const revoke = await alice.post(`keys/${bobKeyId}/revoke`);
      expect(revoke.status).toBe(404);
      expect(revoke.body['code']).toBe('api_key_not_found');
      expect((await h.call(bobSecret)).status).toBe(200);
      expect((await alice.post(`party-keys/${bobParty}/revoke`)).status).toBe(404);

      expect((await alice.get('keys')).body['keys']).toEqual([]);
      const ledger = (await alice.get('ledger')).body['entries'] as Array<{ reason: string; delta: number }>;
      expect(ledger.map((e) => e.reason)).toEqual(['sign-up credits']);
      expect((await alice.get('ledger.csv')).text).not.toContain('search depth');
      expect(((await alice.get('usage')).body['totals'] as { calls: number }).calls).toBe(0);
      expect(((await bob.get('usage')).body['totals'] as { calls: number }).calls).toBe(2);
      expect(((await alice.get('party-keys')).body['keys'] as unknown[]).length).toBe(0);
      expect((await alice.get('tenant')).body['tenant']).toMatchObject({ name: 'alice-org' });
      // Filters cannot reach across either: another tenant's key id filters to nothing.
      expect((await alice.get(`ledger?key_id=${bobKeyId}`)).body['entries']).toEqual([]);
    });
  });

  describe('roles', () => {
    it('a member gets 403 and a visitor 401 on every operator endpoint; an operator has no tenant pages', async () => {
      const member = await h.member('member-roles@example.org');
      const visitor = h.client();
      await visitor.open();
      for (const [method, url, body] of OPERATOR_ROUTES) {
        const asMember = await member.request(method, url, body === undefined ? {} : { body });
        expect({ method, url, status: asMember.status, code: asMember.body['code'] }).toEqual({ method, url, status: 403, code: 'operator_only' });
        const asVisitor = await visitor.request(method, url, body === undefined ? {} : { body });
        expect({ method, url, status: asVisitor.status }).toEqual({ method, url, status: 401 });
      }
      const operator = await h.operator();
      expect((await operator.get('operator/overview')).status).toBe(200);
      expect((await operator.get('keys')).status).toBe(403);
      // The member's balance is unchanged by all those attempts.
      expect(((await member.get('tenant')).body['tenant'] as { credits: number }).credits).toBe(100);
    });
  });

  it('the dashboard page is served with a strict content security policy and is never framed', async () => {
    const res = await fetch(`${h.url}/dashboard/keys`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const page = await res.text();
    expect(page).not.toMatch(/https?:\/\//);
    const api = await fetch(`${h.url}/dashboard/api/v1/session`);
    expect(api.headers.get('cache-control')).toBe('no-store');
  });
});
