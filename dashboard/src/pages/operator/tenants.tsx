import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { ActionResult, Badge, ErrorNotice, Loading, Page, formatNumber, useAction, useLoad } from '../../components';
import type { TenantRow } from '../../types';

function TenantCard(props: { tenant: TenantRow; tiers: string[]; features: string[]; onChange: () => Promise<void> }): JSX.Element {
  const { tenant } = props;
  const [credits, setCredits] = useState('');
  const [reason, setReason] = useState('');
  const [collections, setCollections] = useState(tenant.collections?.join(', ') ?? '');
  const action = useAction();
  const id = tenant.id;
  const patch = (body: object, done: string) =>
    action.run(async () => {
      await api('PATCH', `/operator/tenants/${id}`, body);
      await props.onChange();
      return done;
    });
  return (
    <article class="card tenant" aria-labelledby={`t-${id}`} data-tenant={tenant.name}>
      <header class="tenant-head">
        <h2 id={`t-${id}`}>{tenant.name}</h2>
        {tenant.suspended ? <Badge kind="bad">suspended</Badge> : <Badge kind="ok">active</Badge>}
      </header>
      <p class="muted small">
        {tenant.members.length ? tenant.members.join(', ') : 'no members (created from the command line)'} · {tenant.active_keys} active keys
      </p>
      <div class="tenant-grid">
        <div class="field">
          <label for={`tier-${id}`}>Tier</label>
          <select id={`tier-${id}`} value={tenant.tier} onChange={(e) => void patch({ tier: (e.currentTarget as HTMLSelectElement).value }, 'Tier changed; it applies to the next call.')}>
            {props.tiers.map((tier) => (
              <option key={tier} value={tier}>
                {tier}
              </option>
            ))}
            {props.tiers.includes(tenant.tier) ? null : <option value={tenant.tier}>{tenant.tier} (removed)</option>}
          </select>
        </div>
        <form
          class="grant"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await api('POST', `/operator/tenants/${id}/grant`, { credits: Number(credits), ...(reason.trim() ? { reason: reason.trim() } : {}) });
              setCredits('');
              setReason('');
              await props.onChange();
              return `Granted ${credits} credits.`;
            });
          }}
        >
          <div class="field">
            <span class="stat-label">Balance</span>
            <span class="stat-value small-value">{formatNumber(tenant.credits)}</span>
          </div>
          <div class="field">
            <label for={`grant-${id}`}>Grant credits</label>
            <input id={`grant-${id}`} type="number" min={1} required value={credits} onInput={(e) => setCredits((e.currentTarget as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <label for={`reason-${id}`}>Reason</label>
            <input id={`reason-${id}`} value={reason} onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)} />
          </div>
          <button type="submit">Grant</button>
        </form>
      </div>
      <form
        class="grant"
        onSubmit={(e) => {
          e.preventDefault();
          const names = [...new Set(collections.split(',').map((n) => n.trim()).filter((n) => n !== ''))];
          void action.run(async () => {
            await api('PUT', `/operator/tenants/${id}/collections`, { collections: names.length > 0 ? names : null });
            await props.onChange();
            return names.length > 0 ? `Its keys read only ${names.join(', ')}.` : 'Its keys read every collection.';
          });
        }}
      >
        <div class="field">
          <label for={`collections-${id}`}>Collections its keys may read</label>
          <input id={`collections-${id}`} value={collections} onInput={(e) => setCollections((e.currentTarget as HTMLInputElement).value)} aria-describedby={`collections-hint-${id}`} />
          <div class="hint" id={`collections-hint-${id}`}>
            Comma-separated; empty: every collection. Holds for every key and party key of the tenant.
          </div>
        </div>
        <button type="submit" class="button-small">
          Save<span class="visually-hidden"> collections of {tenant.name}</span>
        </button>
      </form>
      <label class="check small">
        <input
          type="checkbox"
          checked={tenant.allow_private_networks}
          onChange={(e) => {
            const on = (e.currentTarget as HTMLInputElement).checked;
            void patch({ allow_private_networks: on }, on ? 'Its crawl jobs may reach private addresses.' : 'Its crawl jobs keep to public addresses.');
          }}
        />
        Its crawl jobs may reach private addresses (an intranet; metadata addresses stay closed)
      </label>
      <details>
        <summary>Features{tenant.features_overridden ? ' (set for this tenant)' : ' (from its tier)'}</summary>
        <fieldset class="inline-checks">
          <legend class="visually-hidden">Features of {tenant.name}</legend>
          {props.features.map((feature) => (
            <label class="check small" key={feature}>
              <input
                type="checkbox"
                checked={tenant.features.includes(feature)}
                onChange={(e) => {
                  const on = (e.currentTarget as HTMLInputElement).checked;
                  void patch({ features: on ? [...tenant.features, feature] : tenant.features.filter((f) => f !== feature) }, 'Features changed.');
                }}
              />
              {feature}
            </label>
          ))}
        </fieldset>
        {tenant.features_overridden ? (
          <button type="button" class="button-small" onClick={() => void patch({ features: null }, 'Features follow the tier again.')}>
            Use the tier's features
          </button>
        ) : null}
      </details>
      <div class="form-actions">
        <button type="button" class={tenant.suspended ? 'button-small' : 'button-small button-danger'} onClick={() => void patch({ suspended: !tenant.suspended }, tenant.suspended ? 'Reinstated.' : 'Suspended: its keys are refused.')}>
          {tenant.suspended ? 'Reinstate' : 'Suspend'}
          <span class="visually-hidden"> {tenant.name}</span>
        </button>
      </div>
      <ActionResult action={action} />
    </article>
  );
}

export function Tenants(): JSX.Element {
  const list = useLoad(() => api<{ tenants: TenantRow[]; tiers: string[]; features: string[] }>('GET', '/operator/tenants'));
  const [filter, setFilter] = useState('');
  const shown = (list.data?.tenants ?? []).filter((t) => !filter || `${t.name} ${t.members.join(' ')}`.toLowerCase().includes(filter.toLowerCase()));
  return (
    <Page title="Tenants" intro="Grant credits, change tiers and features, suspend.">
      <div class="filters">
        <div class="field">
          <label for="f-filter">Find a tenant</label>
          <input id="f-filter" type="search" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} />
        </div>
      </div>
      <ErrorNotice error={list.error} />
      {!list.data ? <Loading /> : null}
      {list.data && shown.length === 0 ? <p class="muted">No tenant matches.</p> : null}
      {list.data ? shown.map((tenant) => <TenantCard key={tenant.id} tenant={tenant} tiers={list.data!.tiers} features={list.data!.features} onChange={list.reload} />) : null}
    </Page>
  );
}
