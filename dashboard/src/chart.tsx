import type { JSX } from 'preact';
import { formatDay, formatNumber } from './components';

export interface ChartSeries {
  key: string;
  label: string;
  values: number[];
}

/** Colours that keep 3:1 against the background and apart from each other (also in grey scale, by lightness order). */
const PALETTE = ['#1f5fbf', '#c2410c', '#15803d', '#7e22ce', '#a16207', '#0e7490', '#be185d', '#4b5563'];

export function seriesColour(index: number): string {
  return PALETTE[index % PALETTE.length] ?? '#4b5563';
}

/** A round upper bound for the axis: 1, 2, 5 times a power of ten. */
export function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/**
 * Stacked daily bars in SVG with a legend and the same numbers as a table (for screen readers and for copying).
 * No canvas and no chart library: a few dozen rectangles.
 */
export function StackedBars(props: { title: string; days: string[]; series: ChartSeries[]; unit: string; testid?: string }): JSX.Element {
  const { days, series } = props;
  const totals = days.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const width = 720;
  const height = 220;
  const left = 44;
  const bottom = 24;
  const plotWidth = width - left - 8;
  const plotHeight = height - bottom - 8;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.7);
  const grand = totals.reduce((a, b) => a + b, 0);
  const labelEvery = Math.ceil(days.length / 8);
  const summary = `${props.title}: ${formatNumber(grand)} ${props.unit} over ${days.length} days` + (series.length > 1 ? `, by ${series.map((s) => s.label).join(', ')}` : '');
  return (
    <figure class="chart" data-testid={props.testid} data-total={grand}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary} preserveAspectRatio="none">
        {[0, 0.5, 1].map((fraction) => {
          const y = 8 + plotHeight * (1 - fraction);
          return (
            <g key={fraction}>
              <line x1={left} x2={width - 8} y1={y} y2={y} class="chart-grid" />
              <text x={left - 6} y={y + 4} class="chart-axis" text-anchor="end">
                {formatNumber(max * fraction)}
              </text>
            </g>
          );
        })}
        {days.map((day, i) => {
          let y = 8 + plotHeight;
          const x = left + i * slot + (slot - barWidth) / 2;
          return (
            <g key={day}>
              {series.map((s, si) => {
                const value = s.values[i] ?? 0;
                if (value <= 0) return null;
                const h = (value / max) * plotHeight;
                y -= h;
                return (
                  <rect key={s.key} x={x} y={y} width={barWidth} height={h} fill={seriesColour(si)}>
                    <title>{`${formatDay(day)} · ${s.label}: ${formatNumber(value)} ${props.unit}`}</title>
                  </rect>
                );
              })}
              {i % labelEvery === 0 ? (
                <text x={left + i * slot + slot / 2} y={height - 6} class="chart-axis" text-anchor="middle">
                  {formatDay(day)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {series.map((s, si) => (
            <li key={s.key}>
              <span class="swatch" style={{ background: seriesColour(si) }} aria-hidden="true" />
              {s.label}: {formatNumber(s.values.reduce((a, b) => a + b, 0))}
            </li>
          ))}
          {series.length === 0 ? <li class="muted">No {props.unit} in this period</li> : null}
        </ul>
        <details>
          <summary>Table of {props.title.toLowerCase()}</summary>
          <div class="table-wrap" tabIndex={0}>
            <table>
              <caption class="visually-hidden">{props.title} per day</caption>
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  {series.map((s) => (
                    <th scope="col" class="num" key={s.key}>
                      {s.label}
                    </th>
                  ))}
                  <th scope="col" class="num">
                    Total
                  </th>
                </tr>
              </thead>
              <tbody>
                {days.map((day, i) => (
                  <tr key={day}>
                    <th scope="row">{day}</th>
                    {series.map((s) => (
                      <td class="num" key={s.key}>
                        {formatNumber(s.values[i] ?? 0)}
                      </td>
                    ))}
                    <td class="num">{formatNumber(totals[i] ?? 0)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      </figcaption>
    </figure>
  );
}
