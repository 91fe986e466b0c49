import { NotaryError } from './errors.js';

export interface StartWait {
  /** What is waited for, as the message names it, e.g. "PostgreSQL at 127.0.0.1:5432". */
  what: string;
  /** The setting (and its environment variable) that points at it, named in the message as the fix. */
  setting: string;
  /** Total time to keep trying, from the first attempt. */
  waitMs: number;
  /** Pause between attempts. */
  intervalMs?: number;
}

/**
 * Runs `attempt` until it succeeds or `waitMs` has passed (a dependency still starting, e.g. in docker compose, gets
 * its time); then fails with one line: what did not answer, the last error, and the setting to fix. Each attempt
 * must bound its own time (a connect or command timeout).
 */
export async function waitAtStart<T>(wait: StartWait, attempt: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const deadline = started + wait.waitMs;
  const interval = wait.intervalMs ?? 1_000;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (Date.now() + interval > deadline) {
        const seconds = Math.round((Date.now() - started) / 100) / 10;
        throw new NotaryError(
          'dependency_unavailable',
          `${wait.what} did not answer at start (${tries} ${tries === 1 ? 'try' : 'tries'} in ${seconds} s; last: ${reason.split('\n')[0]?.slice(0, 200)}). Fix: start it, or correct ${wait.setting}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }
}

/** "host:port" of a URL for messages, without credentials or path. */
export function endpointOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname;
  } catch {
    return 'the configured address';
  }
}
