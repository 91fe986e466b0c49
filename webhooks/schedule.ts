/**
 * When attempt n+1 of a message is due after attempt n failed, per the Standard Webhooks recommendation: the first
 * attempt at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, and 10 h for every later one, until max_attempts.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000];

/** Each delay is spread by up to this fraction either way, so messages that failed together do not retry together. */
export const JITTER = 0.1;

/**
 * The delay before the next attempt after `attemptsMade` failed attempts (1 or more). `random` returns [0, 1);
 * 0.5 gives the schedule's delay exactly.
 */
export function retryDelayMs(attemptsMade: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_MS[Math.min(Math.max(attemptsMade, 1), RETRY_DELAYS_MS.length) - 1] ?? 0;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/** Whether an attempt's outcome is worth retrying: no answer (network error, timeout), 429 or 5xx. Never other 4xx. */
export function isRetryable(outcome: { status: number | null; errorCode: string | null }): boolean {
  if (outcome.status === null) return outcome.errorCode !== 'webhook_address_blocked';
  return outcome.status === 429 || outcome.status >= 500;
}
