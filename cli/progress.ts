import type { CrawlProgress } from '../crawler/index.js';

/** No rate (and no time left) is shown over less than this: the first samples say nothing of the pace. */
export const MIN_RATE_SPAN_MS = 2_000;

/**
 * Live progress for long commands: one rewritten line on a terminal, a line every few seconds otherwise
 * (CI logs, pipes), always on stderr so stdout stays machine-readable.
 */
export class ProgressLine {
  private lastPrint = 0;
  private lastLength = 0;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = stream.isTTY ? 200 : 5000,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  update(text: string, force = false): void {
    const now = Date.now();
    if (!force && now - this.lastPrint < this.intervalMs) return;
    this.lastPrint = now;
    if (this.tty) {
      const pad = Math.max(0, this.lastLength - text.length);
      this.stream.write(`\r${text}${' '.repeat(pad)}`);
      this.lastLength = text.length;
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** A log line between progress updates; on a terminal the progress line is redrawn by the next update. */
  interrupt(text: string): void {
    if (this.tty && this.lastLength > 0) this.stream.write('\r' + ' '.repeat(this.lastLength) + '\r');
    this.lastLength = 0;
    this.lastPrint = 0;
    this.stream.write(`${text}\n`);
  }

  done(text: string): void {
    if (this.tty && this.lastLength > 0) this.stream.write('\r' + ' '.repeat(this.lastLength) + '\r');
    this.stream.write(`${text}\n`);
    this.lastLength = 0;
  }
}

/** "1 h 02 min", "3 min 05 s", "12 s". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

/**
 * Rate and time left of a phase whose total is known (indexing pages, embedding passages): the rate over the last
 * `windowMs` of samples, so a phase that speeds up or slows down is estimated by what it does now. No rate and no time
 * left are shown until the samples span `minSpanMs` and show progress: a first sample a millisecond after the start
 * would otherwise read "64000.0 passages/s · 0 s left".
 */
export class RateMeter {
  private readonly samples: Array<{ at: number; done: number }> = [];

  constructor(
    private readonly total: number,
    private readonly windowMs = 30_000,
    private readonly minSpanMs = MIN_RATE_SPAN_MS,
  ) {}

  /** `<done>/<total> <unit>`, then ` · <rate> <unit>/s · <time left> left` once there is a rate to show. */
  describe(done: number, unit: string): string {
    const now = Date.now();
    this.samples.push({ at: now, done });
    while (this.samples.length > 2 && now - (this.samples[0]?.at ?? now) > this.windowMs) this.samples.shift();
    const first = this.samples[0] ?? { at: now, done };
    const span = now - first.at;
    const left = Math.max(0, this.total - done);
    const head = `${done}/${this.total} ${unit}`;
    if (left === 0) return `${head} · done`;
    if (span < this.minSpanMs || done <= first.done) return head;
    const rate = ((done - first.done) / span) * 1000;
    return `${head} · ${rate.toFixed(1)} ${unit}/s · ${formatDuration((left / rate) * 1000)} left`;
  }
}

/**
 * The crawl's progress line: counts at once, the rate and time left once the crawl has run `MIN_RATE_SPAN_MS` and
 * stored something. `final`: the closing line, whose rate is over the whole run however short.
 */
export function crawlProgressLine(p: CrawlProgress, final = false): string {
  const rated = p.pagesPerSecond > 0 && (final || p.elapsedMs >= MIN_RATE_SPAN_MS);
  const eta = rated && !final && p.etaMs !== null ? ` · ~${formatDuration(p.etaMs)} left` : '';
  return (
    `crawl: stored ${p.stored}/${p.maxPages} · queued ${p.queued} · duplicates ${p.duplicates} · failed ${p.failed}` +
    ` · skipped ${p.skipped.total}${rated ? ` · ${p.pagesPerSecond.toFixed(1)} pages/s` : ''}${eta} · ${formatDuration(p.elapsedMs)}`
  );
}
