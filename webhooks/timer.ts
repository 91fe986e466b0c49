import type { WebhookOutbox } from './outbox.js';

export interface DeliveryTimerOptions {
  /** webhooks.deliver_every_ms: the pause between two rounds of deliverDue. */
  everyMs: number;
  log: (level: 'info' | 'warn', message: string) => void;
}

export interface DeliveryTimer {
  /**
   * Claims no more messages and waits for the attempts in flight, at most `waitMs`: an attempt cut short keeps its
   * claim, which lapses (webhooks.timeout_ms + 30 s) and is attempted again with the same webhook-id.
   */
  stop(waitMs: number): Promise<void>;
}

/**
 * The background delivery of `notary serve` and `notary crawl-worker`: one round of deliverDue, a pause of everyMs,
 * the next round; rounds never overlap in a process, and processes never post one message at once (the outbox's
 * claims). A round that fails (the database away) is logged and the next one tries again.
 */
export function startDeliveryTimer(outbox: WebhookOutbox, options: DeliveryTimerOptions): DeliveryTimer {
  const stopping = new AbortController();
  let wake: (() => void) | undefined;
  let lastError = '';
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const report = await outbox.deliverDue(undefined, stopping.signal);
        lastError = '';
        if (report.failed > 0) options.log('warn', `webhooks: ${report.failed} messages failed for good (GET /v1/webhooks/{id}/deliveries lists their attempts)`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        // One line per distinct failure, not one a round.
        if (message !== lastError) options.log('warn', `webhooks: delivery round failed: ${message}`);
        lastError = message;
      }
      if (stopping.signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.everyMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();
  return {
    async stop(waitMs) {
      stopping.abort();
      wake?.();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([loop, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    },
  };
}
