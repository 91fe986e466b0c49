import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { ActionResult, ErrorNotice, Loading, Page, TableHead, useAction, useLoad } from '../../components';
import { FEATURE_LABELS, type TierSettings, type TiersAnswer } from '../../types';
import { OriginNote } from './pricing';

interface Row {
  name: string;
  rpm: string;
  burst: string;
  monthly: string;
  features: string[];
}

export function Tiers(): JSX.Element {
  const answer = useLoad(() => api<TiersAnswer>('GET', '/operator/tiers'));
  const [rows, setRows] = useState<Row[]>([]);
  const save = useAction();
  useEffect(() => {
    if (!answer.data) return;
    setRows(
      Object.entries(answer.data.tiers).map(([name, t]) => ({ name, rpm: String(t.requests_per_minute), burst: String(t.burst), monthly: String(t.monthly_credits), features: [...t.features] })),
    );
  }, [answer.data]);
  const set = (i: number, patch: Partial<Row>) => setRows((current) => current.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  const submit = (event: Event) => {
    event.preventDefault();
    void save.run(async () => {
      const tiers: Record<string, TierSettings> = {};
      for (const row of rows) {
        tiers[row.name.trim()] = { requests_per_minute: Number(row.rpm), burst: Number(row.burst), monthly_credits: Number(row.monthly), features: row.features };
      }
      await api('PUT', '/operator/tiers', { tiers });
      await answer.reload();
      return 'Saved: the limits apply to the next call of every key on these tiers.';
    });
  };
  const data = answer.data;
  const features = data?.features ?? Object.keys(FEATURE_LABELS);
  const required = new Set([data?.default_tier, data?.anonymous_tier]);
  return (
    <Page title="Tiers" intro="Rate limits per key (GCRA: a burst, refilled at the sustained rate), monthly credit grants and features. Changes apply to the next call.">
      <ErrorNotice error={answer.error} />
      {!data ? <Loading /> : null}
      {data ? (
        <form onSubmit={submit}>
          <OriginNote origin={data.origin} what="tiers" />
          <div class="table-wrap" tabIndex={0}>
            <table data-testid="tiers-table">
              <TableHead columns={['Tier', 'Requests / min', 'Burst', 'Monthly credits', 'Features', 'Tenants']} actions />
              <tbody>
                {rows.map((row, i) => {
                  const known = row.name in data.tiers;
                  return (
                    <tr key={i}>
                      <th scope="row">
                        {known ? (
                          row.name
                        ) : (
                          <input aria-label="New tier name" value={row.name} required pattern="[a-z0-9][a-z0-9_-]{0,31}" onInput={(e) => set(i, { name: (e.currentTarget as HTMLInputElement).value })} />
                        )}
                        {row.name === data.default_tier ? <span class="muted small"> (default)</span> : null}
                      </th>
                      <td>
                        <input type="number" min={1} required aria-label={`${row.name} requests per minute`} value={row.rpm} onInput={(e) => set(i, { rpm: (e.currentTarget as HTMLInputElement).value })} />
                      </td>
                      <td>
                        <input type="number" min={1} required aria-label={`${row.name} burst`} value={row.burst} onInput={(e) => set(i, { burst: (e.currentTarget as HTMLInputElement).value })} />
                      </td>
                      <td>
                        <input type="number" min={0} required aria-label={`${row.name} monthly credits`} value={row.monthly} onInput={(e) => set(i, { monthly: (e.currentTarget as HTMLInputElement).value })} />
                      </td>
                      <td>
                        <fieldset class="inline-checks">
                          <legend class="visually-hidden">{row.name} features</legend>
                          {features.map((feature) => (
                            <label class="check small" key={feature}>
                              <input
                                type="checkbox"
                                checked={row.features.includes(feature)}
                                onChange={(e) =>
                                  set(i, { features: (e.currentTarget as HTMLInputElement).checked ? [...row.features, feature] : row.features.filter((f) => f !== feature) })
                                }
                              />
                              {feature}
                            </label>
                          ))}
                        </fieldset>
                      </td>
                      <td class="num">{data.tenants_per_tier[row.name] ?? 0}</td>
                      <td>
                        {required.has(row.name) ? null : (
                          <button type="button" class="button-small button-danger" onClick={() => setRows((current) => current.filter((_, j) => j !== i))}>
                            Remove<span class="visually-hidden"> {row.name}</span>
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <div class="form-actions">
            <button type="button" onClick={() => setRows((current) => [...current, { name: '', rpm: '60', burst: '10', monthly: '0', features: [...features] }])}>
              Add a tier
            </button>
            <button type="submit" class="button-primary" disabled={save.busy}>
              Save tiers
            </button>
            {data.origin.source === 'operator' ? (
              <button
                type="button"
                onClick={() =>
                  void save.run(async () => {
                    await api('DELETE', '/operator/tiers');
                    await answer.reload();
                    return 'The configuration file’s tiers apply again.';
                  })
                }
              >
                Reset to the configuration
              </button>
            ) : null}
          </div>
          <p class="muted small">Tenants of a removed tier get the default tier's limits until you move them.</p>
          <ActionResult action={save} />
        </form>
      ) : null}
    </Page>
  );
}
