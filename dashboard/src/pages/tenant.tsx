import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { StackedBars } from '../chart';
import { ActionResult, Badge, ConfirmButton, ErrorNotice, Link, Loading, Notice, Page, PriceTable, Stat, TableHead, TextField, formatDate, formatNumber, useAction, useLoad } from '../components';
import { useSession } from '../session';
import { FEATURE_LABELS, type ApiKey, type PartyKey, type SessionInfo, type TenantInfo, type UsageAnswer } from '../types';
import { usePeriod } from '../period';
import { collectionsBody } from './keys';
import { seriesLabel } from './usage';

export function Overview(): JSX.Element {
  const tenant = useLoad(() => api<TenantInfo>('GET', '/tenant'));
  const keys = useLoad(() => api<{ keys: ApiKey[] }>('GET', '/keys'));
  const [days] = usePeriod();
  const usage = useLoad(() => api<UsageAnswer>('GET', `/usage${query({ days, by: 'operation' })}`), [days], 5000);
  const info = tenant.data;
  const active = (keys.data?.keys ?? []).filter((k) => !k.revoked_at && !(k.expires_at && Date.parse(k.expires_at) <= Date.now())).length;
  return (
    <Page title={info ? info.tenant.name : 'Overview'} intro="Your organisation at a glance.">
      <ErrorNotice error={tenant.error} />
      {info?.tenant.suspended ? <Notice kind="error">This organisation is suspended: its keys are refused. Contact the operator of this server.</Notice> : null}
      <div class="stats">
        <Stat label="Balance" value={info ? `${formatNumber(info.tenant.credits)} credits` : '…'} hint={<Link to="/credits">Ledger</Link>} testid="balance" />
        <Stat label="Tier" value={info ? info.tier.name : '…'} hint={info ? `${formatNumber(info.tier.requests_per_minute)} requests/min, burst ${info.tier.burst}` : undefined} />
        <Stat label="Active keys" value={keys.data ? String(active) : '…'} hint={<Link to="/keys">Manage keys</Link>} />
        <Stat label={`Calls, last ${days} days`} value={usage.data ? formatNumber(usage.data.totals.calls) : '…'} hint={<Link to="/usage">Usage (pick another period)</Link>} testid="overview-calls" />
      </div>
      {usage.data ? (
        <StackedBars
          title="Calls per day"
          unit="calls"
          days={usage.data.days}
          series={usage.data.series.map((s) => ({ key: s.key, label: seriesLabel('operation', s.key), values: s.calls }))}
        />
      ) : (
        <Loading />
      )}
      <QuickStart />
    </Page>
  );
}

/** A shell-quoted JSON body for the curl example (a title may hold a quote). */
function exampleBody(queryText: string): string {
  return `'${JSON.stringify({ query: queryText, depth: 1 }).replace(/'/g, `'\\''`)}'`;
}

/** The first call to copy, searching for the name of a page that is in this server's index. */
function QuickStart(): JSX.Element {
  const example = useLoad(() => api<{ query: string | null }>('GET', '/example-query'));
  const queryText = example.data?.query ?? null;
  return (
    <section class="card" data-testid="quick-start">
      <h2>Quick start</h2>
      <ol>
        <li>
          <Link to="/keys">Create a key</Link>; it is shown once.
        </li>
        <li>
          Call the API
          {example.data ? (queryText ? <>, here with the title of a page in this server's index:</> : <>. The index is empty so far: nothing will be found until the operator's crawl has indexed pages.</>) : ':'}
          <pre class="code" tabIndex={0} aria-label="Example request" data-testid="example-request">
            {`curl ${window.location.origin}/v1/search \\\n  -H "Authorization: Bearer $NOTARY_KEY" \\\n  -H 'content-type: application/json' \\\n  -d ${exampleBody(queryText ?? 'your question')}`}
          </pre>
        </li>
      </ol>
    </section>
  );
}

export function Plan(): JSX.Element {
  const tenant = useLoad(() => api<TenantInfo>('GET', '/tenant'));
  const info = tenant.data;
  return (
    <Page title="Tier and limits" intro="What your keys may do and how fast. Every response carries the same numbers in rate_limit and the RateLimit headers.">
      <ErrorNotice error={tenant.error} />
      {!info ? <Loading /> : null}
      {info ? (
        <>
          <div class="stats">
            <Stat label="Tier" value={info.tier.name} testid="tier-name" />
            <Stat label="Sustained rate" value={`${formatNumber(info.tier.requests_per_minute)} / min`} testid="tier-rate" />
            <Stat label="Burst" value={formatNumber(info.tier.burst)} hint="requests at once" testid="tier-burst" />
            <Stat label="Monthly grant" value={`${formatNumber(info.tier.monthly_credits)} credits`} />
          </div>
          <p>
            Header: <code data-testid="tier-policy">RateLimit-Policy: {info.tier.rate_limit_policy}</code>
          </p>
          <h2>Features</h2>
          <ul class="features">
            {Object.entries(FEATURE_LABELS).map(([feature, label]) => {
              const on = info.features.includes(feature);
              return (
                <li key={feature}>
                  <Badge kind={on ? 'ok' : 'neutral'}>{on ? 'enabled' : 'not enabled'}</Badge> {label}
                </li>
              );
            })}
          </ul>
          <h2>Prices</h2>
          <PriceTable rows={info.prices} amountLabel="Pay-per-call amount" />
        </>
      ) : null}
    </Page>
  );
}

export function Parties(): JSX.Element {
  const list = useLoad(() => api<{ party: string; keys: PartyKey[] }>('GET', '/party-keys'));
  const [publicKey, setPublicKey] = useState('');
  const [label, setLabel] = useState('');
  const [collections, setCollections] = useState('');
  const add = useAction();
  const revoke = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void add.run(async () => {
      const answer = await api<{ key: PartyKey; created: boolean }>('POST', '/party-keys', {
        public_key: publicKey,
        ...(label.trim() ? { name: label.trim() } : {}),
        ...collectionsBody(collections),
      });
      setPublicKey('');
      setLabel('');
      setCollections('');
      await list.reload();
      return answer.created ? `Registered; its kid is ${answer.key.kid}.` : `This key is registered already; its kid is ${answer.key.kid}.`;
    });
  };
  return (
    <Page
      title="Party keys"
      intro={
        <>
          Ed25519 public keys that sign your share of multi-party payment envelopes. Envelopes name your organisation
          {list.data ? (
            <>
              {' '}
              (<code>{list.data.party}</code>)
            </>
          ) : null}{' '}
          as the party and a key by its kid (RFC 7638 thumbprint).
        </>
      }
    >
      <section class="card" aria-labelledby="add-party-key">
        <h2 id="add-party-key">Register a public key</h2>
        <form onSubmit={submit} class="stack">
          <div class="field">
            <label for="f-public-key">
              Public key<span class="required" aria-hidden="true"> *</span>
            </label>
            <textarea id="f-public-key" required rows={3} class="mono" value={publicKey} aria-describedby="f-public-key-hint" onInput={(e) => setPublicKey((e.currentTarget as HTMLTextAreaElement).value)} />
            <div class="hint" id="f-public-key-hint">
              The raw 32-byte key in base64url (43 characters), or its public JWK. Never paste a private key.
            </div>
          </div>
          <TextField label="Label" name="label" value={label} onInput={setLabel} hint="Optional, e.g. “billing agent”." />
          <TextField
            label="Collections"
            name="party-key-collections"
            value={collections}
            onInput={setCollections}
            hint="Optional: the only collections envelopes signed with this key may search, comma-separated. Empty: every collection your organisation may read."
          />
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={add.busy}>
              Register key
            </button>
          </div>
        </form>
        <ActionResult action={add} />
      </section>
      <ActionResult action={revoke} />
      <ErrorNotice error={list.error} />
      {list.data && list.data.keys.length === 0 ? <p class="muted">No party keys yet.</p> : null}
      {list.data && list.data.keys.length > 0 ? (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <TableHead columns={['Label', 'kid', 'Collections', 'Registered', 'State']} actions />
            <tbody>
              {list.data.keys.map((key) => (
                <tr key={key.kid}>
                  <th scope="row">{key.name ?? '—'}</th>
                  <td class="mono small">{key.kid}</td>
                  <td>{key.collections ? key.collections.join(', ') : <span class="muted">all</span>}</td>
                  <td>{formatDate(key.created_at)}</td>
                  <td>{key.revoked_at ? <Badge kind="bad">revoked</Badge> : <Badge kind="ok">active</Badge>}</td>
                  <td>
                    {key.revoked_at ? null : (
                      <ConfirmButton
                        label="Revoke"
                        name={key.name ?? key.kid}
                        confirm="Envelopes signed with it will be refused."
                        onConfirm={async () => {
                          await revoke.run(async () => {
                            await api('POST', `/party-keys/${encodeURIComponent(key.kid)}/revoke`);
                            await list.reload();
                            return 'Revoked.';
                          });
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Page>
  );
}

interface Jwk {
  kid?: string;
  kty?: string;
  crv?: string;
  x?: string;
  alg?: string;
  use?: string;
  [member: string]: unknown;
}

/** The service's receipt-signing keys, read from the public JWKS like any verifier would. */
export function Receipts(): JSX.Element {
  const jwks = useLoad(async () => {
    const response = await fetch('/.well-known/jwks.json', { headers: { accept: 'application/json' } });
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`/.well-known/jwks.json answered ${response.status}`);
    return (await response.json()) as { keys: Jwk[] };
  });
  return (
    <Page
      title="Signed receipts"
      intro={
        <>
          Send <code>X-Notary-Sign: required</code> with any paid call to get a <code>notary_receipt</code> signed with Ed25519, verifiable offline against
          the published keys.
        </>
      }
    >
      <p>
        Published keys: <a href="/.well-known/jwks.json">/.well-known/jwks.json</a>
      </p>
      <ErrorNotice error={jwks.error} />
      {jwks.loading ? <Loading /> : null}
      {!jwks.loading && jwks.data === null ? <Notice kind="info">Signed receipts are not enabled on this server: it publishes no signing keys.</Notice> : null}
      {jwks.data ? (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <TableHead columns={['kid', 'Algorithm', 'Public key (x)', 'Validity']} />
            <tbody>
              {jwks.data.keys.map((key) => (
                <tr key={key.kid}>
                  <th scope="row" class="mono small">
                    {key.kid}
                  </th>
                  <td>
                    {key.alg} {key.crv}
                  </td>
                  <td class="mono small">{key.x}</td>
                  <td>
                    {Object.entries(key)
                      .filter(([name]) => /valid|not_|retired|created|from|until/i.test(name))
                      .map(([name, value]) => `${name}: ${String(value)}`)
                      .join(', ') || '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Page>
  );
}

export function Account(): JSX.Element {
  const { session, update, signOut } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const change = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void change.run(async () => {
      if (next !== repeat) throw new Error('The two new passwords differ.');
      update(await api<SessionInfo>('POST', '/password', { current_password: current, new_password: next }));
      setCurrent('');
      setNext('');
      setRepeat('');
      return 'Password changed. Your other sessions were signed out.';
    });
  };
  const user = session.user;
  return (
    <Page title="Account">
      {user ? (
        <dl class="facts">
          <dt>Email</dt>
          <dd>{user.email}</dd>
          <dt>Role</dt>
          <dd>{user.role}</dd>
          <dt>Member since</dt>
          <dd>{formatDate(user.created_at)}</dd>
        </dl>
      ) : null}
      <section class="card" aria-labelledby="password-title">
        <h2 id="password-title">Change password</h2>
        <form onSubmit={submit} class="stack">
          <input type="text" name="username" autoComplete="username" value={user?.email ?? ''} hidden readOnly />
          <TextField label="Current password" name="current-password" type="password" autocomplete="current-password" required value={current} onInput={setCurrent} />
          <TextField
            label="New password"
            name="new-password"
            type="password"
            autocomplete="new-password"
            required
            minLength={session.password_min_length}
            value={next}
            onInput={setNext}
            hint={`At least ${session.password_min_length} characters.`}
          />
          <TextField label="New password again" name="repeat-password" type="password" autocomplete="new-password" required value={repeat} onInput={setRepeat} />
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={change.busy}>
              Change password
            </button>
          </div>
        </form>
        <ActionResult action={change} />
      </section>
      <ConfirmButton label="Sign out" confirm="Sign out of this browser?" onConfirm={signOut} />
    </Page>
  );
}
