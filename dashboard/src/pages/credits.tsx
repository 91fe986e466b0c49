import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { API_BASE, api, query } from '../api';
import { ErrorNotice, Loading, Page, Stat, TableHead, formatDate, formatNumber, useLoad } from '../components';
import type { ApiKey, LedgerEntry, TenantInfo } from '../types';

export function Credits(): JSX.Element {
  const [kind, setKind] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [keyId, setKeyId] = useState('');
  const [pages, setPages] = useState<LedgerEntry[][]>([]);
  const [next, setNext] = useState<number | null>(null);
  const filters = { kind, from, to, key_id: keyId };
  const tenant = useLoad(() => api<TenantInfo>('GET', '/tenant'));
  const keys = useLoad(() => api<{ keys: ApiKey[] }>('GET', '/keys'));
  const ledger = useLoad(
    async () => {
      const answer = await api<{ entries: LedgerEntry[]; next_before: number | null }>('GET', `/ledger${query({ ...filters, limit: 50 })}`);
      setPages([answer.entries]);
      setNext(answer.next_before);
      return answer;
    },
    [kind, from, to, keyId],
  );
  const more = async () => {
    if (next === null) return;
    const answer = await api<{ entries: LedgerEntry[]; next_before: number | null }>('GET', `/ledger${query({ ...filters, limit: 50, before: next })}`);
    setPages((current) => [...current, answer.entries]);
    setNext(answer.next_before);
  };
  const entries = pages.flat();
  const keyName = new Map((keys.data?.keys ?? []).map((k) => [k.id, `${k.name ?? ''} (${k.prefix}…${k.last4})`]));
  return (
    <Page title="Credits" intro="Every grant and every paid call, newest first.">
      <div class="stats">
        <Stat label="Balance" value={tenant.data ? `${formatNumber(tenant.data.tenant.credits)} credits` : '…'} testid="balance" />
        <Stat label="Monthly grant" value={tenant.data ? `${formatNumber(tenant.data.tier.monthly_credits)} credits` : '…'} hint={tenant.data ? `tier ${tenant.data.tier.name}` : undefined} />
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the ledger">
        <div class="field">
          <label for="f-kind">Entries</label>
          <select id="f-kind" value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">All</option>
            <option value="debit">Calls (debits)</option>
            <option value="credit">Grants (credits)</option>
          </select>
        </div>
        <div class="field">
          <label for="f-from">From</label>
          <input id="f-from" type="date" value={from} onChange={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="f-to">To</label>
          <input id="f-to" type="date" value={to} onChange={(e) => setTo((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="f-key">Key</label>
          <select id="f-key" value={keyId} onChange={(e) => setKeyId((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Any</option>
            {(keys.data?.keys ?? []).map((k) => (
              <option value={k.id} key={k.id}>
                {keyName.get(k.id)}
              </option>
            ))}
          </select>
        </div>
        <div class="form-actions">
          <a class="button" href={`${API_BASE}/ledger.csv${query(filters)}`} download>
            Export CSV
          </a>
        </div>
      </form>
      <ErrorNotice error={ledger.error} />
      {ledger.loading && entries.length === 0 ? <Loading /> : null}
      {!ledger.loading && entries.length === 0 ? <p class="muted">No entries match.</p> : null}
      {entries.length > 0 ? (
        <div class="table-wrap" tabIndex={0}>
          <table data-testid="ledger-table">
            <TableHead columns={['When', 'What', { label: 'Credits', num: true }, { label: 'Balance after', num: true }, 'Key', 'Request']} />
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatDate(entry.created_at)}</td>
                  <th scope="row">{entry.reason}</th>
                  <td class={`num ${entry.delta < 0 ? 'debit' : 'credit'}`}>{entry.delta > 0 ? `+${formatNumber(entry.delta)}` : formatNumber(entry.delta)}</td>
                  <td class="num">{formatNumber(entry.balance_after)}</td>
                  <td>{entry.key_id ? (keyName.get(entry.key_id) ?? entry.key_id) : '—'}</td>
                  <td class="mono small">{entry.request_id ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {next !== null ? (
        <button type="button" onClick={() => void more()}>
          Older entries
        </button>
      ) : null}
    </Page>
  );
}
