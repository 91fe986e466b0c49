import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { ActionResult, Badge, ConfirmButton, ErrorNotice, Loading, Page, TableHead, TextField, formatDate, formatNumber, useAction, useLoad } from '../../components';
import type { CrawlRunView, Seed, SeedScope } from '../../types';

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

const SCOPE_LABELS: Record<SeedScope, string> = {
  path: 'the seed’s path',
  host: 'the seed’s host',
  domain: 'its domain',
  any: 'any site',
};

function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function RunProgress(props: { run: CrawlRunView }): JSX.Element {
  const s = props.run.stats ?? {};
  const stored = s.stored ?? (s.fetched ?? 0) + (s.unchanged ?? 0) + (s.fresh ?? 0);
  const queued = s.queued ?? 0;
  const done = stored + (s.duplicates ?? 0) + (s.failed ?? 0) + (s.skipped?.total ?? 0);
  const running = props.run.state === 'running';
  // A rate needs time to mean something: none in a running crawl's first two seconds (as on the command line).
  const rated = !running || (s.elapsedMs ?? 0) >= 2000;
  // The page budget bounds the crawl as much as its queue does.
  const budget = s.maxPages ? stored / s.maxPages : 0;
  const fraction = props.run.state === 'finished' ? 1 : Math.max(budget, done / Math.max(1, done + queued));
  return (
    <div class="progress-cell">
      <progress max={100} value={Math.round(fraction * 100)} aria-label={`Crawl ${props.run.id} progress`} />
      <span>
        {formatNumber(stored)}
        {s.maxPages ? ` of ${formatNumber(s.maxPages)}` : ''} stored ({formatNumber(s.fetched ?? 0)} new or changed, {formatNumber(s.unchanged ?? 0)} unchanged) · {formatNumber(queued)} queued ·{' '}
        {formatNumber(s.failed ?? 0)} failed
        {rated && s.pagesPerSecond !== undefined ? ` · ${s.pagesPerSecond.toFixed(1)} pages/s` : ''}
        {rated && running && s.etaMs !== undefined && s.etaMs !== null ? ` · about ${formatDuration(s.etaMs)} left` : ''}
        {s.elapsedMs !== undefined ? ` · ${formatDuration(s.elapsedMs)} so far` : ''}
        {props.run.resumed_from ? ` · resumed ${props.run.resumed_from}` : ''}
        {s.phase === 'indexing' ? ' · indexing' : ''}
        {s.indexed_pages !== undefined ? ` · indexed ${formatNumber(s.indexed_pages)} pages` : ''}
      </span>
    </div>
  );
}

const STATE_KIND: Record<CrawlRunView['state'], 'ok' | 'warn' | 'bad' | 'neutral'> = { running: 'ok', finished: 'neutral', stopped: 'warn', interrupted: 'warn', stale: 'bad' };

export function Crawl(): JSX.Element {
  const seeds = useLoad(() => api<{ seeds: Seed[]; defaults: { recrawl_hours: number; scope: SeedScope } }>('GET', '/operator/seeds'), [], 5000);
  const runs = useLoad(() => api<{ runs: CrawlRunView[]; worker: { enabled: boolean; poll_s: number } }>('GET', '/operator/crawl'), [], 2000);
  const [url, setUrl] = useState('');
  const [include, setInclude] = useState('');
  const [exclude, setExclude] = useState('');
  const [scope, setScope] = useState<SeedScope | ''>('');
  const [maxDepth, setMaxDepth] = useState('');
  const [maxPages, setMaxPages] = useState('');
  const [recrawl, setRecrawl] = useState('');
  const [collection, setCollection] = useState('');
  const add = useAction();
  const change = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void add.run(async () => {
      await api('POST', '/operator/seeds', {
        url,
        include: lines(include),
        exclude: lines(exclude),
        scope: scope === '' ? null : scope,
        max_depth: maxDepth ? Number(maxDepth) : null,
        max_pages: maxPages ? Number(maxPages) : null,
        ...(recrawl ? { recrawl_hours: Number(recrawl) } : {}),
        collection: collection.trim() === '' ? null : collection.trim(),
      });
      setUrl('');
      setInclude('');
      setExclude('');
      await Promise.all([seeds.reload(), runs.reload()]);
      return `Added ${url}; the crawl worker picks it up within ${runs.data?.worker.poll_s ?? 5} s.`;
    });
  };
  // Runs of URLs that are not seeds: `notary crawl <url>` on the command line (or a seed removed since) crawls once.
  const seedUrls = new Set((seeds.data?.seeds ?? []).map((seed) => seed.url));
  const oneOff = seeds.data ? [...new Set((runs.data?.runs ?? []).flatMap((run) => run.seeds))].filter((u) => !seedUrls.has(u)) : [];
  const act = (label: string, request: () => Promise<unknown>) =>
    change.run(async () => {
      await request();
      await Promise.all([seeds.reload(), runs.reload()]);
      return label;
    });
  return (
    <Page title="Crawling" intro="Seeds the serve-time crawl worker crawls and re-checks, with their scope rules; progress updates live.">
      {runs.data && !runs.data.worker.enabled ? <p class="notice notice-info">The crawl worker is off on this server (server.crawl_on_start): seeds are kept but not crawled.</p> : null}
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Crawl status</h2>
        <ErrorNotice error={runs.error} />
        {!runs.data ? <Loading /> : null}
        {runs.data && runs.data.runs.length === 0 ? <p class="muted">No crawl has run yet.</p> : null}
        {runs.data && runs.data.runs.length > 0 ? (
          <div class="table-wrap" tabIndex={0}>
            <table data-testid="runs-table" aria-live="polite" aria-busy={runs.loading}>
              <TableHead columns={['Run', 'Seeds', 'Started', 'State', 'Progress']} />
              <tbody>
                {runs.data.runs.slice(0, 10).map((run) => (
                  <tr key={run.id} data-run-state={run.state} data-fetched={run.stats?.fetched ?? 0}>
                    <th scope="row" class="mono small">
                      {run.id}
                    </th>
                    <td class="small break">
                      {run.seeds.join(', ')}
                      {seeds.data && run.seeds.some((u) => !seedUrls.has(u)) ? (
                        <>
                          {' '}
                          <Badge>not a seed</Badge>
                        </>
                      ) : null}
                    </td>
                    <td>{formatDate(run.started_at)}</td>
                    <td>
                      <Badge kind={STATE_KIND[run.state]}>{run.state}</Badge>
                    </td>
                    <td>
                      <RunProgress run={run} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      <section aria-labelledby="seeds-title">
        <h2 id="seeds-title">Seeds</h2>
        <ActionResult action={change} />
        <ErrorNotice error={seeds.error} />
        {seeds.data && seeds.data.seeds.length === 0 ? <p class="muted">No seeds yet: add one below.</p> : null}
        {oneOff.length > 0 ? (
          <div class="notice notice-info" data-testid="one-off-crawls">
            <p>
              Crawled once, not seeds: a crawl started on the command line (<code>notary crawl &lt;url&gt;</code>) is not a seed, so the worker does not re-check it. Add it as a seed to
              keep its pages fresh.
            </p>
            <ul class="plain">
              {oneOff.map((u) => (
                <li key={u}>
                  <span class="break">{u}</span>{' '}
                  <button type="button" class="button-small" onClick={() => void act(`Added ${u} as a seed.`, () => api('POST', '/operator/seeds', { url: u }))}>
                    Add as seed<span class="visually-hidden"> {u}</span>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {seeds.data && seeds.data.seeds.length > 0 ? (
          <div class="table-wrap" tabIndex={0}>
            <table data-testid="seeds-table">
              <TableHead columns={['URL', 'Scope', 'Recrawl', 'Last crawled', 'State']} actions />
              <tbody>
                {seeds.data.seeds.map((seed) => (
                  <tr key={seed.id}>
                    <th scope="row" class="small break">
                      {seed.url} {seed.source === 'config' ? <Badge>config</Badge> : null}
                    </th>
                    <td class="small">
                      {SCOPE_LABELS[seed.options.scope ?? seeds.data?.defaults.scope ?? 'path']}
                      {seed.options.include.length ? ` · include ${seed.options.include.join(', ')}` : ''}
                      {seed.options.exclude.length ? ` · exclude ${seed.options.exclude.join(', ')}` : ''}
                      {seed.options.max_depth !== null ? ` · depth ≤ ${seed.options.max_depth}` : ''}
                      {seed.options.max_pages !== null ? ` · ≤ ${formatNumber(seed.options.max_pages)} pages` : ''}
                      {seed.options.collection !== null ? ` · into ${seed.options.collection}` : ''}
                    </td>
                    <td>every {seed.recrawl_hours} h</td>
                    <td>{formatDate(seed.last_crawled_at)}</td>
                    <td>{seed.paused ? <Badge kind="warn">paused</Badge> : <Badge kind="ok">active</Badge>}</td>
                    <td class="actions">
                      <button type="button" class="button-small" onClick={() => void act(seed.paused ? 'Resumed.' : 'Paused.', () => api('PATCH', `/operator/seeds/${seed.id}`, { paused: !seed.paused }))}>
                        {seed.paused ? 'Resume' : 'Pause'}
                        <span class="visually-hidden"> {seed.url}</span>
                      </button>
                      <button type="button" class="button-small" disabled={seed.paused} onClick={() => void act('Crawl requested.', () => api('POST', `/operator/seeds/${seed.id}/crawl`))}>
                        Crawl now<span class="visually-hidden"> {seed.url}</span>
                      </button>
                      <ConfirmButton label="Remove" name={seed.url} confirm="Stop crawling it? Pages stay indexed." onConfirm={() => void act('Removed.', () => api('DELETE', `/operator/seeds/${seed.id}`))} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      <section class="card" aria-labelledby="add-seed-title">
        <h2 id="add-seed-title">Add a seed</h2>
        <form onSubmit={submit} class="form-grid">
          <TextField label="Start URL" name="seed-url" type="url" required value={url} onInput={setUrl} placeholder="https://docs.example.org/" class="wide" />
          <div class="field">
            <label for="f-include">Include (regular expressions, one per line)</label>
            <textarea id="f-include" rows={2} class="mono" value={include} onInput={(e) => setInclude((e.currentTarget as HTMLTextAreaElement).value)} aria-describedby="f-include-hint" />
            <div class="hint" id="f-include-hint">
              A URL must match one of them; empty: everything in scope.
            </div>
          </div>
          <div class="field">
            <label for="f-exclude">Exclude (regular expressions, one per line)</label>
            <textarea id="f-exclude" rows={2} class="mono" value={exclude} onInput={(e) => setExclude((e.currentTarget as HTMLTextAreaElement).value)} />
          </div>
          <TextField label="Max depth" name="max-depth" type="number" min={0} value={maxDepth} onInput={setMaxDepth} hint="Links followed from the seed; empty: the server's default." />
          <TextField label="Max pages" name="max-pages" type="number" min={1} value={maxPages} onInput={setMaxPages} hint="Empty: the server's default." />
          <TextField
            label="Recrawl every (hours)"
            name="recrawl"
            type="number"
            min={0.05}
            step="any"
            value={recrawl}
            onInput={setRecrawl}
            hint={`Empty: ${seeds.data?.defaults.recrawl_hours ?? 24} h.`}
          />
          <TextField
            label="Collection"
            name="collection"
            value={collection}
            onInput={setCollection}
            hint="The collection its pages join, made when new (lower-case letters, digits, - and _); empty: default."
          />
          <div class="field">
            <label for="f-scope">Stay within</label>
            <select id="f-scope" value={scope} onChange={(e) => setScope((e.currentTarget as HTMLSelectElement).value as SeedScope | '')}>
              <option value="">Default: {SCOPE_LABELS[seeds.data?.defaults.scope ?? 'path']}</option>
              {(Object.keys(SCOPE_LABELS) as SeedScope[]).map((value) => (
                <option value={value} key={value}>
                  {SCOPE_LABELS[value]}
                </option>
              ))}
            </select>
          </div>
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={add.busy}>
              Add seed
            </button>
          </div>
        </form>
        <ActionResult action={add} />
      </section>
    </Page>
  );
}
