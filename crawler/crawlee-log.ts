import { Log, Logger, LogLevel, log as crawleeGlobalLog } from '@crawlee/core';
import type { CrawlLog } from './session.js';

/**
 * Marks errors the crawler throws on purpose: to stop a download (non-HTML, too large) or to retry a page after a 429;
 * not worth a warning.
 */
export const deliberateStopMarker = '[notary:skip]';

class ForwardingLogger extends Logger {
  constructor(private readonly forward: CrawlLog) {
    super({});
  }

  override _log(level: LogLevel, message: string): void {
    if (level > LogLevel.WARNING || message.includes(deliberateStopMarker)) return;
    // Failed requests are reported by the crawler itself, with the URL and reason.
    if (message.startsWith('Request failed and reached maximum retries')) return;
    this.forward('warn', `crawlee: ${message}`);
  }
}

/** A crawler-scoped crawlee Log: warnings and errors go to our log; info and debug chatter is dropped. */
export function crawleeLog(forward: CrawlLog): Log {
  // Crawlee's module-level log (autoscaling, sitemap parser) prints to the console: keep it to warnings and up.
  if (crawleeGlobalLog.getLevel() > LogLevel.WARNING) crawleeGlobalLog.setLevel(LogLevel.WARNING);
  return new Log({ level: LogLevel.WARNING, logger: new ForwardingLogger(forward), prefix: 'crawlee' });
}
