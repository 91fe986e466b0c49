import { startAddonWorker, type AddonWorker } from '../../../core/index.js';
import type { PostingsBuildConfig, PostingsReply } from './postings-worker.js';
import { Postings } from './postings.js';

export interface MemoryRankingOptions {
  /**
   * Whether a caller waits for a build under way instead of being told to rank in SQL meanwhile, and a build follows
   * every write at once (tests).
   */
  waitForBuild?: boolean;
}

/**
 * Keeps one FTS5 table's Postings in step with the table: built in a worker thread from a read-only connection, used
 * only while the table's write generation is the one it was built at; after a write (by any process) the caller
 * ranks in SQL until a new build is in. Builds follow writes at most every few seconds (and never more than a tenth
 * of the time), so a crawl writing all along does not keep a core busy rebuilding.
 */
export class MemoryRanking {
  private postings: Postings | null = null;
  private building: Promise<void> | null = null;
  private worker: AddonWorker | null = null;
  private lastStart = -Infinity;
  private lastMs = 0;
  private closed = false;
  /** Builds finished, failed and rankings answered from memory (tests, benchmarks). */
  readonly counts = { builds: 0, failures: 0, answered: 0 };
  lastError: string | null = null;

  constructor(
    private readonly config: PostingsBuildConfig,
    private readonly options: MemoryRankingOptions = {},
  ) {}

  /** The postings of `generation`, or null (a build is started when none is under way and enough time has passed). */
  async current(generation: string): Promise<Postings | null> {
    if (this.postings?.generation === generation) return this.postings;
    const interval = this.options.waitForBuild ? 0 : Math.max(MIN_REBUILD_MS, 10 * this.lastMs);
    if (!this.building && !this.closed && performance.now() - this.lastStart >= interval) this.startBuild();
    if (this.options.waitForBuild && this.building) {
      await this.building;
      if (this.postings?.generation === generation) return this.postings;
    }
    return null;
  }

  /** Builds a copy of `generation` now if there is none (whatever the time since the last), and waits for it. */
  async ready(generation: string): Promise<boolean> {
    if (this.postings?.generation !== generation && !this.building && !this.closed) this.startBuild();
    await this.building;
    return this.postings?.generation === generation;
  }

  /** Bytes of the latest copy built (of whichever generation). */
  get bytes(): number {
    return this.postings?.bytes ?? 0;
  }

  answered(): void {
    this.counts.answered++;
  }

  private startBuild(): void {
    const started = performance.now();
    this.lastStart = started;
    const thread = startAddonWorker(new URL('./postings-worker.ts', import.meta.url), this.config);
    const worker = thread.worker;
    this.worker = thread;
    this.building = new Promise<void>((resolve) => {
      let done = false;
      const finish = (reply: PostingsReply | null, error?: string) => {
        if (done) return;
        done = true;
        if (this.worker === thread) this.worker = null;
        this.building = null;
        this.lastMs = performance.now() - started;
        if (reply?.ok) {
          this.postings = new Postings(reply.snapshot);
          this.counts.builds++;
        } else {
          this.counts.failures++;
          this.lastError = reply && !reply.ok ? reply.error : (error ?? 'the build stopped');
        }
        resolve();
      };
      worker.once('message', (reply: PostingsReply) => {
        finish(reply);
        void thread.stop();
      });
      worker.once('error', (error) => finish(null, error.message));
      worker.once('exit', (code) => finish(null, `the build thread exited (code ${code})`));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    await worker?.stop();
    await this.building;
    this.postings = null;
  }
}

/** The least time between two builds' starts. */
const MIN_REBUILD_MS = 5_000;
