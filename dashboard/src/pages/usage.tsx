import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, query } from '../api';
import { StackedBars } from '../chart';
import { ErrorNotice, Loading, Page, Stat, formatNumber, useLoad } from '../components';
import { PeriodSelect, usePeriod } from '../period';
import type { UsageAnswer } from '../types';

const BREAKDOWNS: Record<string, string> = { operation: 'Endpoint', depth: 'Search depth', mode: 'Payment mode', environment: 'Live or test' };

export function seriesLabel(by: string, key: string): string {
  if (by === 'operation') return `/v1/${key}`;
  if (by === 'depth') return `depth ${key}`;
  if (by === 'mode') return key.replace('_', ' ');
  return key;
}

/** Calls and credits per day; refreshes every 5 seconds while the tab is visible, so it moves as calls come in. */
export function Usage(): JSX.Element {
  const [days, setDays] = usePeriod();
  const [by, setBy] = useState('operation');
  const [environment, setEnvironment] = useState('all');
  const usage = useLoad(() => api<UsageAnswer>('GET', `/usage${query({ days, by, environment })}`), [days, by, environment], 5000);
  const data = usage.data;
  return (
    <Page title="Usage" intro="Calls served and credits they cost, per day (UTC). Failed calls are never charged and are not counted.">
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Chart options">
        <PeriodSelect id="f-days" days={days} onPick={setDays} />
        <div class="field">
          <label for="f-by">Break down by</label>
          <select id="f-by" value={by} onChange={(e) => setBy((e.currentTarget as HTMLSelectElement).value)}>
            {Object.entries(BREAKDOWNS).map(([value, label]) => (
              <option value={value} key={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-env">Keys</label>
          <select id="f-env" value={environment} onChange={(e) => setEnvironment((e.currentTarget as HTMLSelectElement).value)}>
            <option value="all">Live and test</option>
            <option value="live">Live only</option>
            <option value="test">Test only</option>
          </select>
        </div>
      </form>
      <ErrorNotice error={usage.error} />
      {!data ? <Loading /> : null}
      {data ? (
        <>
          <div class="stats">
            <Stat label="Calls" value={formatNumber(data.totals.calls)} hint={`last ${days} days`} testid="usage-calls" />
            <Stat label="Credits" value={formatNumber(data.totals.credits)} hint={`last ${days} days`} testid="usage-credits" />
          </div>
          <h2>Calls per day</h2>
          <StackedBars
            title="Calls per day"
            unit="calls"
            days={data.days}
            series={data.series.map((s) => ({ key: s.key, label: seriesLabel(data.by, s.key), values: s.calls }))}
            testid="calls-chart"
          />
          <h2>Credits per day</h2>
          <StackedBars
            title="Credits per day"
            unit="credits"
            days={data.days}
            series={data.series.map((s) => ({ key: s.key, label: seriesLabel(data.by, s.key), values: s.credits }))}
            testid="credits-chart"
          />
        </>
      ) : null}
    </Page>
  );
}
