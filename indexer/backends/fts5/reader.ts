import type { Worker } from 'node:worker_threads';
import { NotaryError, startAddonWorker, type AddonWorker } from '../../../core/index.js';
import type { Fts5ReaderConfig, Fts5ReaderReply, Fts5ReaderRequest } from './reader-worker.js';

type Pending = { resolve: (rows: unknown[]) => void; reject: (error: Error) => void };

/**
 * A second SQLite connection, read only, in a worker thread: a full-text query sent here runs beside the one the
 * calling thread runs (a search ranks whole pages there while it ranks passages itself, on two cores). Requests are
 * answered in order; the worker keeps the process alive only while one is pending.
 */
export class Fts5Reader {
  private readonly thread: AddonWorker;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;

  constructor(file: string) {
    const config: Fts5ReaderConfig = { file };
    this.thread = startAddonWorker(new URL('./reader-worker.ts', import.meta.url), config);
    this.worker = this.thread.worker;
    this.worker.unref();
    this.worker.on('message', (reply: Fts5ReaderReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if (reply.ok) waiter.resolve(reply.rows);
      else waiter.reject(new NotaryError('internal_error', `full-text reader: ${reply.error}`));
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new NotaryError('internal_error', `full-text reader exited (code ${code})`)));
  }

  /** False once the worker failed (the caller then runs its queries itself). */
  get usable(): boolean {
    return this.failure === null;
  }

  all(sql: string, params: unknown[]): Promise<unknown[]> {
    if (this.failure) return Promise.reject(this.failure);
    const request: Fts5ReaderRequest = { id: this.nextId++, sql, params };
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new NotaryError('internal_error', 'full-text reader closed');
    await this.thread.stop();
  }
}
