/** The answers that ask a crawler to slow down: 429 always, 503 only when it says how long to wait. */
export function asksToBackOff(status: number, retryAfter: string | null): boolean {
  return status === 429 || (status === 503 && retryAfter !== null);
}

/**
 * How long to leave a host alone after a 429/503, from its Retry-After header (delay-seconds or an HTTP-date, RFC 9110
 * §10.2.3). A missing or unreadable header gives `defaultMs`; the result is capped at `maxMs`.
 */
export function retryAfterMs(value: string | null, options: { defaultMs: number; maxMs: number; now?: number }): number {
  const text = value?.trim() ?? '';
  let waitMs = options.defaultMs;
  if (/^\d+$/.test(text)) {
    waitMs = Number(text) * 1000;
  } else if (/[a-z]/i.test(text)) {
    // Every HTTP-date form names the month; Date.parse would also take things like "-5" as a year.
    const date = Date.parse(text);
    if (!Number.isNaN(date)) waitMs = Math.max(0, date - (options.now ?? Date.now()));
  }
  return Math.min(waitMs, options.maxMs);
}

export interface CrawlDelay {
  /** Spacing between two request starts to the host: max(per_host_delay_ms, the capped Crawl-delay). */
  delayMs: number;
  /** True when the Crawl-delay was larger than the cap and was cut to it. */
  capped: boolean;
}

/** The per-host spacing a robots.txt `Crawl-delay: seconds` asks for, or null when the value is not a positive number. */
export function crawlDelayMs(seconds: number, options: { perHostDelayMs: number; maxMs: number }): CrawlDelay | null {
  if (!(seconds > 0)) return null;
  const askedMs = seconds * 1000;
  const capped = askedMs > options.maxMs;
  return { delayMs: Math.max(options.perHostDelayMs, Math.round(capped ? options.maxMs : askedMs)), capped };
}
