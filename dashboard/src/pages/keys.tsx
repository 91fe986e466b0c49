import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { ActionResult, Badge, ConfirmButton, ErrorNotice, Loading, Page, TableHead, TextField, formatDate, useAction, useLoad } from '../components';
import type { ApiKey, TenantInfo } from '../types';

/** A comma-separated list of collection names as the key request's member (none: no limit). */
export function collectionsBody(text: string): { collections?: string[] } {
  const names = [...new Set(text.split(',').map((n) => n.trim()).filter((n) => n !== ''))];
  return names.length > 0 ? { collections: names } : {};
}

/** What a key may call (the server's KEY_SCOPES): each is a /v1 route. */
const KEY_SCOPES = ['search', 'extract', 'map', 'crawl'] as const;

function keyState(key: ApiKey, now: number): { label: string; kind: 'ok' | 'bad' | 'warn' } {
  if (key.revoked_at) return { label: 'Revoked', kind: 'bad' };
  if (key.expires_at && Date.parse(key.expires_at) <= now) return { label: 'Expired', kind: 'warn' };
  return { label: 'Active', kind: 'ok' };
}

/** The plaintext of a new key, shown once: copy it now, it is never shown again. */
function NewKey(props: { secret: string; name: string; onDone: () => void }): JSX.Element {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const field = useRef<HTMLInputElement>(null);
  const region = useRef<HTMLElement>(null);
  useEffect(() => {
    region.current?.focus();
  }, []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('yes');
    } catch {
      field.current?.select();
      setCopied('failed');
    }
  };
  return (
    <section class="card new-key" aria-labelledby="new-key-title" tabIndex={-1} ref={region} data-testid="new-key">
      <h2 id="new-key-title">Your new key “{props.name}”</h2>
      <p>
        <strong>This is the only time the key is shown.</strong> Store it in your secret manager now; the server keeps only
        its SHA-256.
      </p>
      <div class="copy-row">
        <label class="visually-hidden" for="new-key-value">
          API key
        </label>
        <input id="new-key-value" ref={field} readOnly value={props.secret} class="mono" onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <button type="button" class="button-primary" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" class="muted">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? 'The browser did not allow copying: the key is selected, press Ctrl+C.' : ''}
      </p>
      <button type="button" onClick={props.onDone}>
        I have stored it
      </button>
    </section>
  );
}

export function Keys(): JSX.Element {
  const keys = useLoad(() => api<{ keys: ApiKey[] }>('GET', '/keys'));
  const tenant = useLoad(() => api<TenantInfo>('GET', '/tenant'));
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([...KEY_SCOPES]);
  const [expires, setExpires] = useState('');
  const [collections, setCollections] = useState('');
  const [environment, setEnvironment] = useState<'live' | 'test'>('live');
  const [created, setCreated] = useState<{ secret: string; name: string } | null>(null);
  const create = useAction();
  const revoke = useAction();
  const testKeys = tenant.data?.features.includes('test_keys') ?? false;
  const toggleScope = (scope: string, on: boolean) => setScopes((current) => (on ? [...new Set([...current, scope])] : current.filter((s) => s !== scope)));
  const submit = (event: Event) => {
    event.preventDefault();
    void create.run(async () => {
      const answer = await api<{ key: string; record: ApiKey }>('POST', '/keys', { name, scopes, environment, expires_at: expires || null, ...collectionsBody(collections) });
      setCreated({ secret: answer.key, name: answer.record.name ?? name });
      setName('');
      setExpires('');
      setCollections('');
      await keys.reload();
    });
  };
  const now = Date.now();
  const today = new Date().toISOString().slice(0, 10);
  return (
    <Page title="API keys" intro={<>Send a key as <code>Authorization: Bearer sk_live_…</code>. Test keys (<code>sk_test_…</code>) call the same API and are never charged.</>}>
      {created ? (
        <NewKey
          secret={created.secret}
          name={created.name}
          onDone={() => {
            setCreated(null);
            document.getElementById('f-name')?.focus();
          }}
        />
      ) : null}
      <section class="card" aria-labelledby="create-key-title">
        <h2 id="create-key-title">Create a key</h2>
        <form onSubmit={submit} class="form-grid">
          <TextField label="Name" name="name" required value={name} onInput={setName} hint="What uses it, e.g. “ci” or “research agent”." />
          <TextField label="Expires on" name="expires" type="date" min={today} value={expires} onInput={setExpires} hint="Optional. The key stops working at the end of that day (UTC)." />
          <TextField
            label="Collections"
            name="key-collections"
            value={collections}
            onInput={setCollections}
            hint="Optional: the only collections the key may search, comma-separated. Empty: every collection your organisation may read."
          />
          <fieldset class="field">
            <legend>Scopes</legend>
            {KEY_SCOPES.map((scope) => (
              <label class="check" key={scope}>
                <input type="checkbox" name="scopes" value={scope} checked={scopes.includes(scope)} onChange={(e) => toggleScope(scope, (e.currentTarget as HTMLInputElement).checked)} />
                <code>/v1/{scope}</code>
              </label>
            ))}
          </fieldset>
          <fieldset class="field">
            <legend>Kind</legend>
            <label class="check">
              <input type="radio" name="environment" value="live" checked={environment === 'live'} onChange={() => setEnvironment('live')} />
              <span>
                Live (<code>sk_live_</code>, charged)
              </span>
            </label>
            <label class="check">
              <input type="radio" name="environment" value="test" checked={environment === 'test'} disabled={!testKeys} onChange={() => setEnvironment('test')} />
              <span>
                Test (<code>sk_test_</code>, never charged){testKeys ? '' : ' — not enabled for your organisation'}
              </span>
            </label>
          </fieldset>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={create.busy || scopes.length === 0}>
              {create.busy ? 'Creating…' : 'Create key'}
            </button>
          </div>
        </form>
        <ActionResult action={create} />
      </section>
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        <ActionResult action={revoke} />
        <ErrorNotice error={keys.error} />
        {keys.loading && !keys.data ? <Loading /> : null}
        {keys.data && keys.data.keys.length === 0 ? <p class="muted">No keys yet.</p> : null}
        {keys.data && keys.data.keys.length > 0 ? (
          <div class="table-wrap" tabIndex={0}>
            <table data-testid="keys-table">
              <TableHead columns={['Name', 'Key', 'Scopes', 'Created', 'Last used', 'Expires', 'State']} actions />
              <tbody>
                {[...keys.data.keys].reverse().map((key) => {
                  const state = keyState(key, now);
                  return (
                    <tr key={key.id} data-key-id={key.id}>
                      <th scope="row">
                        {key.name ?? '—'} {key.environment === 'test' ? <Badge kind="test">test</Badge> : null}
                      </th>
                      <td class="mono">
                        {key.prefix}…{key.last4}
                      </td>
                      <td>{key.scopes.split(',').join(', ')}</td>
                      <td>{formatDate(key.created_at)}</td>
                      <td>{key.last_used_at ? formatDate(key.last_used_at) : 'never'}</td>
                      <td>{key.expires_at ? formatDate(key.expires_at) : 'never'}</td>
                      <td>
                        <Badge kind={state.kind}>{state.label}</Badge>
                      </td>
                      <td>
                        {key.revoked_at ? null : (
                          <ConfirmButton
                            label="Revoke"
                            name={key.name ?? key.prefix}
                            confirm="Calls with this key will fail."
                            onConfirm={async () => {
                              await revoke.run(async () => {
                                await api('POST', `/keys/${encodeURIComponent(key.id)}/revoke`);
                                await keys.reload();
                                return `Revoked ${key.name ?? key.prefix}.`;
                              });
                            }}
                          />
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </Page>
  );
}
