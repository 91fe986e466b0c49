import { NotaryError } from '../../core/index.js';

const DAY_MS = 86_400_000;

/** The last `days` calendar days (UTC) up to and including today: their dates and the half-open ISO range they span. */
export function dayRange(days: number, now: Date = new Date()): { days: string[]; from: string; to: string } {
  if (!Number.isInteger(days) || days < 1 || days > 366) throw new NotaryError('invalid_request', 'days must be an integer from 1 to 366');
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const list: string[] = [];
  for (let i = days - 1; i >= 0; i--) list.push(new Date(today - i * DAY_MS).toISOString().slice(0, 10));
  return { days: list, from: new Date(today - (days - 1) * DAY_MS).toISOString(), to: new Date(today + DAY_MS).toISOString() };
}

/** A YYYY-MM-DD date as the ISO instant of its start (UTC), or undefined when absent; 400 when malformed. */
export function dateParam(value: string | undefined, name: string, endOfDay = false): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new NotaryError('invalid_request', `${name} must be a date written YYYY-MM-DD`);
  }
  const start = Date.parse(`${value}T00:00:00Z`);
  return new Date(endOfDay ? start + DAY_MS : start).toISOString();
}
