import type { JSX } from 'preact';
import { api, query } from '../../api';
import { StackedBars } from '../../chart';
import { Badge, ErrorNotice, Link, Loading, Page, Stat, TableHead, formatDate, formatNumber, useLoad } from '../../components';
import { PeriodSelect, usePeriod } from '../../period';
import type { CrawlRunView } from '../../types';

interface OverviewAnswer {
  tenants: number;
  suspended: number;
  pages: number;
  passages: number;
  last_run: CrawlRunView | null;
  calls_today: number;
  credits_today: number;
  prices_from: string;
  tiers_from: string;
}

export function OperatorOverview(): JSX.Element {
  const data = useLoad(() => api<OverviewAnswer>('GET', '/operator/overview'), [], 5000);
  const o = data.data;
  return (
    <Page title="Operator" intro="The service at a glance.">
      <ErrorNotice error={data.error} />
      {!o ? <Loading /> : null}
      {o ? (
        <div class="stats">
          <Stat label="Tenants" value={formatNumber(o.tenants)} hint={o.suspended ? `${o.suspended} suspended` : <Link to="/operator/tenants">Manage</Link>} />
          <Stat label="Indexed pages" value={formatNumber(o.pages)} hint={`${formatNumber(o.passages)} passages`} />
          <Stat label="Calls today" value={formatNumber(o.calls_today)} hint={`${formatNumber(o.credits_today)} credits`} />
          <Stat
            label="Last crawl"
            value={o.last_run ? <Badge kind={o.last_run.state === 'running' ? 'ok' : 'neutral'}>{o.last_run.state}</Badge> : 'never'}
            hint={o.last_run ? formatDate(o.last_run.started_at) : <Link to="/operator/crawl">Add a seed</Link>}
          />
        </div>
      ) : null}
      {o ? (
        <p class="muted">
          Prices from {o.prices_from === 'config' ? 'the configuration file' : 'an operator’s edit'}; tiers from {o.tiers_from === 'config' ? 'the configuration file' : 'an operator’s edit'}.
        </p>
      ) : null}
      <ServiceHealth />
    </Page>
  );
}

interface HealthAnswer {
  health: { ok: true; report: Record<string, unknown> } | { ok: false; error: string };
  ready: Record<string, boolean> | null;
}

/** Why the service is (not) healthy: what /healthz keeps to itself (model sources, why a model is off, errors). */
function ServiceHealth(): JSX.Element {
  const data = useLoad(() => api<HealthAnswer>('GET', '/operator/health'), [], 15000);
  const h = data.data;
  if (!h) return <ErrorNotice error={data.error} />;
  const down = h.ready ? Object.entries(h.ready).filter(([, up]) => !up).map(([name]) => name) : [];
  return (
    <section data-testid="service-health">
      <h2>Health</h2>
      <p>
        {h.health.ok ? <Badge kind="ok">ok</Badge> : <Badge kind="bad">probe failed</Badge>}{' '}
        {down.length > 0 ? `not ready: ${down.join(', ')} not answering` : h.ready ? 'every dependency answers' : ''}
      </p>
      <pre class="muted wrap">{h.health.ok ? JSON.stringify(h.health.report, null, 2) : h.health.error}</pre>
    </section>
  );
}

export function IndexStats(): JSX.Element {
  const data = useLoad(
    () =>
      api<{
        pages: { pages: number; pending: number; gone: number; passages: number };
        index: { backend: string; documents: number; bytes: number | null };
        last_crawl: CrawlRunView | null;
      }>('GET', '/operator/index'),
    [],
    5000,
  );
  const d = data.data;
  return (
    <Page title="Index" intro="What searches run against.">
      <ErrorNotice error={data.error} />
      {!d ? <Loading /> : null}
      {d ? (
        <div class="stats">
          <Stat label="Pages" value={formatNumber(d.pages.pages)} hint={`${formatNumber(d.pages.pending)} waiting for the indexer, ${formatNumber(d.pages.gone)} gone`} testid="index-pages" />
          <Stat label="Passages" value={formatNumber(d.pages.passages)} />
          <Stat label="Index" value={formatNumber(d.index.documents)} hint={`${d.index.backend}${d.index.bytes !== null ? `, ${(d.index.bytes / 1e6).toFixed(1)} MB` : ''}`} />
          <Stat label="Last crawl" value={d.last_crawl ? d.last_crawl.state : 'never'} hint={d.last_crawl ? formatDate(d.last_crawl.started_at) : undefined} />
        </div>
      ) : null}
    </Page>
  );
}

interface ModeSeries {
  mode: string;
  asset: string;
  calls: number[];
  credits: number[];
  amount: string[];
  total_calls: number;
  total_credits: number;
  total_amount: string;
}

interface RevenueAnswer {
  days: string[];
  /** Calls served and their credits, by payment mode. */
  modes: ModeSeries[];
  /** Money settled on chain (the paying modes), from the payments ledger. */
  settled: ModeSeries[];
  credit_price: { symbol: string; decimals: number; creditPrice: string };
}

export function Revenue(): JSX.Element {
  const [days, setDays] = usePeriod();
  const data = useLoad(() => api<RevenueAnswer>('GET', `/operator/revenue${query({ days })}`), [days], 10000);
  const d = data.data;
  return (
    <Page title="Revenue" intro="What each payment mode brought in from live calls: the credits of the calls served, and the money pay-per-call modes settled, from the payments ledger.">
      <div class="filters">
        <PeriodSelect id="f-rdays" days={days} onPick={setDays} />
      </div>
      <ErrorNotice error={data.error} />
      {!d ? <Loading /> : null}
      {d ? (
        <>
          <div class="table-wrap" tabIndex={0}>
            <table data-testid="revenue-table">
              <TableHead columns={['Payment mode', { label: 'Calls', num: true }, { label: 'Credits', num: true }, { label: 'Payments settled', num: true }, { label: 'Money settled', num: true }]} />
              <tbody>
                {d.modes.length === 0 ? (
                  <tr>
                    <td colSpan={5} class="muted">
                      No paid calls in this period.
                    </td>
                  </tr>
                ) : null}
                {d.modes.map((m) => {
                  const money = d.settled.filter((p) => p.mode === m.mode);
                  return (
                    <tr key={`${m.mode}-${m.asset}`}>
                      <th scope="row">{m.mode.replace('_', ' ')}</th>
                      <td class="num">{formatNumber(m.total_calls)}</td>
                      <td class="num">{formatNumber(m.total_credits)}</td>
                      <td class="num">{money.length ? formatNumber(money.reduce((sum, p) => sum + p.total_calls, 0)) : '—'}</td>
                      <td class="num">{money.length ? money.map((p) => `${p.total_amount} ${p.asset}`).join(', ') : '—'}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <h2>Credits per day</h2>
          <StackedBars title="Credits per day by payment mode" unit="credits" days={d.days} series={d.modes.map((m) => ({ key: `${m.mode}-${m.asset}`, label: m.mode.replace('_', ' '), values: m.credits }))} />
        </>
      ) : null}
    </Page>
  );
}
