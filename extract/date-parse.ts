/**
 * Date strings as pages, servers and sitemaps write them, read without the platform's local time zone: every value
 * is computed with Date.UTC, so the machine's TZ never shifts a date. A value with a time and no zone is read as
 * UTC (the page does not say its zone; the error is at most the site's offset). A date without a time stays a day.
 */

export type DatePrecision = 'day' | 'time';

export interface ParsedDate {
  /** `YYYY-MM-DD` for a day, `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC) for a time. */
  iso: string;
  precision: DatePrecision;
  /** Milliseconds since the epoch (a day counts from its UTC midnight), for comparisons. */
  ms: number;
}

/** Earliest date accepted: pages dated before it carry template or epoch-zero junk far more often than real dates. */
export const EARLIEST_DATE_MS = Date.UTC(1990, 0, 1);
/** Accepted this far in the future (a zone ahead of the server, a clock a little fast); later dates are junk. */
export const FUTURE_SLACK_MS = 24 * 3600 * 1000;

const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
};

/** Zone names RFC 2822 and US sites write, in minutes east of UTC. */
const ZONES: Record<string, number> = {
  z: 0, ut: 0, utc: 0, gmt: 0, est: -300, edt: -240, cst: -360, cdt: -300, mst: -420, mdt: -360, pst: -480, pdt: -420,
  bst: 60, cet: 60, cest: 120,
};

const ISO =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T\s]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(z|[a-z]{2,5}|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const SLASHED = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[T\s]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(z|utc|gmt|[+-]\d{2}:?\d{2})?)?$/i;
const COMPACT = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})?(z)?)?$/i;
const MONTH_NAME = '(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\\.?';
const TIME_PART = '(?:[,\\s]+(?:(?:at|-|–|um|à)\\s+)?(\\d{1,2}):(\\d{2})(?::(\\d{2}))?\\s*(am|pm|a\\.m\\.|p\\.m\\.)?\\s*([a-z]{1,5}|[+-]\\d{2}:?\\d{2})?)?';
/** "Fri, 17 May 2024 10:00:00 GMT", "17 May 2024", "17. Mai"-free English forms only. */
const DAY_MONTH = new RegExp(`^(?:[a-z]+\\.?,?\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\.?\\s+${MONTH_NAME},?\\s+(\\d{4})${TIME_PART}$`, 'i');
/** "May 17, 2024", "Friday, May 17, 2024 at 10:00 AM EDT". */
const MONTH_DAY = new RegExp(`^(?:[a-z]+\\.?,?\\s+)?${MONTH_NAME}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})${TIME_PART}$`, 'i');
/** A time first: "Sat 8:31 PM, Feb 17, 2018", "01:38:07 PM IST Nov 20, 2019". */
const TIME_FIRST = new RegExp(
  `^(?:[a-z]+\\.?,?\\s+)?(\\d{1,2}):(\\d{2})(?::(\\d{2}))?\\s*(am|pm|a\\.m\\.|p\\.m\\.)?\\s*([a-z]{1,5})?,?\\s+${MONTH_NAME}\\s+(\\d{1,2}),?\\s+(\\d{4})$`,
  'i',
);
/** JavaScript's Date.toString(): "Fri May 17 2024 10:00:00 GMT+0200 (Central European Summer Time)". */
const JS_STRING = new RegExp(`^[a-z]{3}\\s+${MONTH_NAME}\\s+(\\d{1,2})\\s+(\\d{4})\\s+(\\d{2}):(\\d{2}):(\\d{2})\\s+gmt([+-]\\d{4})(?:\\s*\\(.*\\))?$`, 'i');

function zoneMinutes(zone: string | undefined): number | null {
  if (!zone) return 0;
  const named = ZONES[zone.toLowerCase()];
  if (named !== undefined) return named;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  if (minutes > 14 * 60) return null;
  return m[1] === '-' ? -minutes : minutes;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
  fraction?: string;
  /** As written (Z, +02:00, EDT); undefined with a time means no zone was written (read as UTC). */
  zone?: string | undefined;
}

function build(p: Parts, zonelessTime: 'utc' | 'day'): ParsedDate | null {
  const { year, month, day } = p;
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  const dayMs = Date.UTC(year, month - 1, day);
  const check = new Date(dayMs);
  // 2024-02-31 and the like roll over in Date.UTC: refuse them.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  if (p.hour === undefined || (zonelessTime === 'day' && !p.zone)) {
    return { iso: check.toISOString().slice(0, 10), precision: 'day', ms: dayMs };
  }
  const minute = p.minute ?? 0;
  const second = p.second ?? 0;
  if (p.hour > 24 || minute > 59 || second > 60 || (p.hour === 24 && (minute > 0 || second > 0))) return null;
  const offset = zoneMinutes(p.zone);
  // A zone name we do not know (IST is India, Israel and Ireland): the day as written is still right.
  if (offset === null) return { iso: check.toISOString().slice(0, 10), precision: 'day', ms: dayMs };
  const millis = p.fraction ? Math.floor(Number(`0.${p.fraction}`) * 1000) : 0;
  const ms = dayMs + ((p.hour * 60 + minute - offset) * 60 + Math.min(second, 59)) * 1000 + millis;
  return { iso: new Date(ms).toISOString(), precision: 'time', ms };
}

function twelveHour(hour: number, meridiem: string | undefined): number {
  if (!meridiem) return hour;
  const pm = meridiem.toLowerCase().startsWith('p');
  if (hour === 12) return pm ? 12 : 0;
  return pm ? hour + 12 : hour;
}

function monthOf(name: string): number {
  return MONTHS[name.toLowerCase().slice(0, name.toLowerCase().startsWith('sept') ? 4 : 3)] ?? 0;
}

/** The parts of a date string in one of the formats seen in practice; null for anything else (relative dates too). */
function partsOf(text: string): Parts | null {
  let m = ISO.exec(text) ?? SLASHED.exec(text);
  if (m) {
    const [, y, mo, d, h, mi, s, frac, zone] = m;
    const slashed = !ISO.test(text);
    return {
      year: Number(y), month: Number(mo), day: Number(d),
      ...(h !== undefined ? { hour: Number(h), minute: Number(mi), second: Number(s ?? 0) } : {}),
      ...(slashed ? { zone: frac } : { fraction: frac, zone }),
    };
  }
  m = COMPACT.exec(text);
  if (m) {
    const [, y, mo, d, h, mi, s, zone] = m;
    return { year: Number(y), month: Number(mo), day: Number(d), ...(h !== undefined ? { hour: Number(h), minute: Number(mi), second: Number(s ?? 0), zone } : {}) };
  }
  m = JS_STRING.exec(text);
  if (m) {
    const [, mon = '', d, y, h, mi, s, zone] = m;
    return { year: Number(y), month: monthOf(mon), day: Number(d), hour: Number(h), minute: Number(mi), second: Number(s), zone };
  }
  m = TIME_FIRST.exec(text);
  if (m) {
    const [, h, mi, s, meridiem, zone, mon = '', d, y] = m;
    return { year: Number(y), month: monthOf(mon), day: Number(d), hour: twelveHour(Number(h), meridiem), minute: Number(mi), second: Number(s ?? 0), zone };
  }
  const dayFirst = DAY_MONTH.exec(text);
  const monthFirst = dayFirst ? null : MONTH_DAY.exec(text);
  if (dayFirst || monthFirst) {
    const g = (dayFirst ?? monthFirst) as RegExpExecArray;
    const [d, mon] = dayFirst ? [g[1], g[2]] : [g[2], g[1]];
    const [, , , y, h, mi, s, meridiem, zone] = g;
    return {
      year: Number(y), month: monthOf(mon ?? ''), day: Number(d),
      ...(h !== undefined ? { hour: twelveHour(Number(h), meridiem), minute: Number(mi), second: Number(s ?? 0), zone } : {}),
    };
  }
  return null;
}

export interface ParseOptions {
  /** Read 10- and 13-digit numbers as Unix timestamps (seconds, milliseconds). */
  allowEpoch?: boolean;
  /**
   * A time written without a zone: `utc` reads it as UTC (machine-written values: meta tags, JSON-LD); `day` keeps
   * only its day (text written for people, in the site's own zone).
   */
  zonelessTime?: 'utc' | 'day';
}

/**
 * Reads one date value; null when it is not a date, is ambiguous (05/06/2024), relative ("2 hours ago"), before
 * 1990 or more than a day after `now`.
 */
export function parseDateValue(raw: string | null | undefined, now: number, options: ParseOptions = {}): ParsedDate | null {
  if (typeof raw !== 'string') return null;
  const text = raw.replace(/\s+/g, ' ').trim();
  if (text.length < 6 || text.length > 80) return null;
  let parsed: ParsedDate | null = null;
  if (/^\d{10}(?:\d{3})?$/.test(text)) {
    if (!options.allowEpoch) return null;
    const ms = text.length === 10 ? Number(text) * 1000 : Number(text);
    parsed = { iso: new Date(ms).toISOString(), precision: 'time', ms };
  } else {
    const parts = partsOf(text);
    parsed = parts ? build(parts, options.zonelessTime ?? 'utc') : null;
  }
  if (!parsed) return null;
  if (parsed.ms < EARLIEST_DATE_MS || parsed.ms > now + FUTURE_SLACK_MS) return null;
  return parsed;
}

/** The calendar day of a parsed date as written in UTC (`YYYY-MM-DD`). */
export function dayOf(date: ParsedDate): string {
  return date.iso.slice(0, 10);
}
