import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** The periods a person can pick; every page that counts days starts on the same one. */
export const PERIODS = [7, 30, 90] as const;
export const DEFAULT_PERIOD = 30;
const STORAGE_KEY = 'notary.period-days';

type Listener = (days: number) => void;
const listeners = new Set<Listener>();

function stored(): number {
  try {
    const value = Number(window.localStorage.getItem(STORAGE_KEY));
    return (PERIODS as readonly number[]).includes(value) ? value : DEFAULT_PERIOD;
  } catch {
    return DEFAULT_PERIOD;
  }
}

/**
 * The period the dashboard counts over: 30 days everywhere (Overview, Usage, Revenue) until the person picks another
 * on any page; the pick is kept in this browser and followed by every page.
 */
export function usePeriod(): [number, (days: number) => void] {
  const [days, setDays] = useState(stored);
  useEffect(() => {
    listeners.add(setDays);
    return () => {
      listeners.delete(setDays);
    };
  }, []);
  const pick = (value: number) => {
    try {
      window.localStorage.setItem(STORAGE_KEY, String(value));
    } catch {
      // Storage refused (a private window): the pick holds for this page view.
    }
    for (const listener of listeners) listener(value);
  };
  return [days, pick];
}

export function PeriodSelect(props: { id: string; days: number; onPick: (days: number) => void }): JSX.Element {
  return (
    <div class="field">
      <label for={props.id}>Period</label>
      <select id={props.id} value={String(props.days)} onChange={(e) => props.onPick(Number((e.currentTarget as HTMLSelectElement).value))}>
        {PERIODS.map((days) => (
          <option value={String(days)} key={days}>
            Last {days} days
          </option>
        ))}
      </select>
    </div>
  );
}
