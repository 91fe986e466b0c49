import { createHash } from 'node:crypto';
import { Meilisearch, type EnqueuedTaskPromise, type Settings, type Task } from 'meilisearch';
import { NotaryError } from '../../../core/index.js';
import { engineProbeOn, processingTimeOf, recordEngineCall } from '../engine-probe.js';
import { chunks, type PassageDocument } from './documents.js';
import { apiErrorOf, keepAliveClient, type KeepAliveClient } from './http-client.js';
import { MAX_TOTAL_HITS, passageIndexSettings, sameSetting } from './settings.js';

export interface MeilisearchOptions {
  url: string;
  /** The master key, an admin key (crawler and indexer), or a search-only key (API nodes). */
  apiKey?: string | undefined;
  /** Index uid of the passages (and their vectors). */
  index: string;
  /** How long a write waits for its task to finish before failing with index_unavailable. */
  taskTimeoutMs: number;
  /** Timeout of one HTTP request. */
  requestTimeoutMs: number;
  /** Documents per write task. */
  batchSize: number;
}

export function asIndexError(err: unknown, what: string): NotaryError {
  if (err instanceof NotaryError) return err;
  // The client wraps what its HTTP function throws: Meilisearch's own message, else the network error's.
  const inner = apiErrorOf(err) ?? (err instanceof Error && err.cause instanceof Error ? err.cause : err);
  const message = inner instanceof Error ? inner.message : String(inner);
  return new NotaryError('index_unavailable', `Meilisearch ${what} failed: ${message}`);
}

/** One Meilisearch server and the passage index on it: the client, task waiting, settings, swaps and keys. */
export class MeilisearchConnection {
  readonly client: Meilisearch;
  /** Kept-alive connections to the server (http-client.ts). */
  private readonly http: KeepAliveClient = keepAliveClient();

  constructor(readonly options: MeilisearchOptions) {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(options.index)) throw new NotaryError('invalid_config', `Meilisearch index uid "${options.index}" must be letters, digits, - and _`);
    this.client = new Meilisearch({
      host: options.url,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      timeout: options.requestTimeoutMs,
      httpClient: this.http.request,
      defaultWaitOptions: { timeout: options.taskTimeoutMs, interval: 25 },
    });
  }

  /** Waits for a task within task_timeout_ms; a failed or timed-out task is index_unavailable. */
  async wait(enqueued: EnqueuedTaskPromise, what: string): Promise<Task> {
    this.recent.clear(); // a write: passages remembered from searches may be out of date
    let task: Task;
    try {
      task = await enqueued.waitTask({ timeout: this.options.taskTimeoutMs, interval: 25 });
    } catch (err) {
      throw asIndexError(err, what);
    }
    this.recent.clear(); // and once it is done (a search may have remembered some while it ran)
    if (task.status !== 'succeeded') {
      throw new NotaryError('index_unavailable', `Meilisearch ${what} task ${task.uid} ${task.status}: ${task.error?.message ?? 'no reason given'}`);
    }
    return task;
  }

  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const started = engineProbeOn() ? performance.now() : 0;
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      throw asIndexError(err, what);
    }
    if (started > 0) recordEngineCall({ what, startedAt: started, roundTripMs: performance.now() - started, engineMs: processingTimeOf(result) });
    return result;
  }

  /**
   * Creates the index when missing and brings its settings to `passageIndexSettings()`, changing only what differs
   * (an unchanged setting queues no task, so every node may run this at start). Returns false when the key may not
   * read settings (a search-only key): such a process leaves the settings to an admin process.
   */
  async ensureIndex(uid: string = this.options.index, wanted: Settings = passageIndexSettings()): Promise<boolean> {
    const index = this.client.index(uid);
    let current: Settings;
    try {
      current = await index.getSettings();
    } catch (err) {
      const apiError = apiErrorOf(err);
      if (apiError?.cause?.code === 'index_not_found') {
        // Processes starting together may both create it: the later task fails with index_already_exists, which is
        // what it wanted anyway.
        const created = await this.call(`creating index ${uid}`, () => this.client.createIndex(uid, { primaryKey: 'id' }).waitTask({ timeout: this.options.taskTimeoutMs, interval: 25 }));
        if (created.status !== 'succeeded' && created.error?.code !== 'index_already_exists') {
          throw new NotaryError('index_unavailable', `Meilisearch creating index ${uid} task ${created.uid} ${created.status}: ${created.error?.message ?? 'no reason given'}`);
        }
        current = await this.call('reading settings', () => index.getSettings());
      } else if (apiError && (apiError.response.status === 403 || apiError.response.status === 401)) {
        return false;
      } else {
        throw asIndexError(err, 'reading settings');
      }
    }
    const changed: Settings = {};
    for (const [key, value] of Object.entries(wanted) as Array<[keyof Settings, unknown]>) {
      if (!sameSetting(current[key], value)) (changed as Record<string, unknown>)[key] = value;
    }
    if (Object.keys(changed).length > 0) await this.wait(index.updateSettings(changed), `updating settings of ${uid}`);
    return true;
  }

  /** Adds a user-provided embedder to the index when it is not there yet. */
  async ensureEmbedder(name: string, dimensions: number, uid: string = this.options.index): Promise<void> {
    const index = this.client.index(uid);
    const embedders = await this.call('reading embedders', () => index.getEmbedders());
    const existing = embedders?.[name];
    if (existing && existing.source === 'userProvided' && existing.dimensions === dimensions) return;
    // Meilisearch refuses a user-provided embedder while any document lacks a vector (or a null) for it: the
    // documents get their null first. A document added between the two tasks fails the second; then again.
    for (let attempt = 0; ; attempt++) {
      for (let offset = 0; ; offset += MAX_TOTAL_HITS) {
        const { results } = await this.call('reading document ids', () => index.getDocuments({ fields: ['id'], limit: MAX_TOTAL_HITS, offset }));
        if (results.length > 0) {
          const nulls = results.map((r) => ({ id: r['id'] as number, _vectors: { [name]: null } }));
          for (const chunk of chunks(nulls, this.options.batchSize)) await this.wait(index.updateDocuments(chunk), `preparing documents for embedder ${name}`);
        }
        if (results.length < MAX_TOTAL_HITS) break;
      }
      try {
        await this.wait(index.updateEmbedders({ [name]: { source: 'userProvided', dimensions } }), `adding embedder ${name}`);
        break;
      } catch (err) {
        if (attempt >= 2 || !(err instanceof NotaryError) || !/no vectors provided/.test(err.message)) throw err;
      }
    }
    this.embedders.delete(uid);
  }

  private readonly embedders = new Map<string, Promise<string[]>>();

  /**
   * Passages a vector search of this process has just returned whole, by index and id, for a few seconds: the
   * pipeline asks for the ones new to its pool right after (SearchIndex.get), which then needs no request of its
   * own. Writes through this connection forget them; another process's writes show after RECENT_MS at most.
   */
  private readonly recent = new Map<string, { doc: PassageDocument; at: number }>();

  remember(uid: string, docs: readonly PassageDocument[]): void {
    if (this.recent.size + docs.length > RECENT_MAX) this.recent.clear();
    const at = Date.now();
    for (const doc of docs) if (doc.url !== undefined) this.recent.set(`${uid}\u0000${doc.id}`, { doc, at });
  }

  recalled(uid: string, id: number): PassageDocument | undefined {
    const entry = this.recent.get(`${uid}\u0000${id}`);
    return entry && Date.now() - entry.at <= RECENT_MS ? entry.doc : undefined;
  }

  forgetRecent(): void {
    this.recent.clear();
  }

  /** Names of the index's embedders (cached; `fresh` reads them again, e.g. after another process added one). */
  embedderNames(uid: string = this.options.index, fresh = false): Promise<string[]> {
    let names = fresh ? undefined : this.embedders.get(uid);
    if (!names) {
      names = this.call('reading embedders', async () => Object.keys((await this.client.index(uid).getEmbedders()) ?? {}));
      this.embedders.set(uid, names);
      names.catch(() => this.embedders.delete(uid));
    }
    return names;
  }

  /**
   * A partial update of documents. Meilisearch needs every user-provided embedder named on a new document (a vector
   * or null); `vectors` gives a document's own, the others are set to null on new documents only (`isNew`), so a
   * text update keeps the vector a document has. Retried once with a fresh embedder list when another process added
   * an embedder meanwhile.
   */
  async updateDocuments(uid: string, docs: readonly object[], isNew: (id: number) => boolean, what: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const names = await this.embedderNames(uid, attempt > 0);
      const prepared = docs.map((doc) => {
        const fields = doc as Record<string, unknown>;
        const own = (fields['_vectors'] as Record<string, unknown> | undefined) ?? undefined;
        if (!own && !isNew(Number(fields['id']))) return fields;
        const vectors: Record<string, unknown> = Object.fromEntries(names.map((n) => [n, null]));
        return { ...doc, _vectors: { ...vectors, ...own } };
      });
      try {
        await this.wait(this.client.index(uid).updateDocuments(prepared), what);
        return;
      } catch (err) {
        if (attempt > 0 || !(err instanceof NotaryError) || !/no vectors provided/.test(err.message)) throw err;
      }
    }
  }

  /**
   * A key for API nodes: search and document reads on notary's passage index (and the index a rebuild swaps in),
   * nothing else. Its uid is fixed, so asking again returns the same key.
   */
  async searchKey(): Promise<{ uid: string; key: string }> {
    const uid = uuidFrom(`notary-search-key:${this.options.index}`);
    try {
      const existing = await this.client.getKey(uid);
      return { uid, key: existing.key };
    } catch (err) {
      if (apiErrorOf(err)?.response.status !== 404) throw asIndexError(err, 'reading keys');
    }
    const created = await this.call('creating the search key', () =>
      this.client.createKey({
        uid,
        name: `notary search (${this.options.index})`,
        description: 'notary API nodes: search and read passages, no writes',
        actions: ['search', 'documents.get'],
        indexes: [this.options.index, `${this.options.index}__*`],
        expiresAt: null,
      }),
    );
    return { uid, key: created.key };
  }

  /** Closes the kept-alive connections (a later request opens new ones). */
  close(): void {
    this.http.close();
  }

  async healthy(): Promise<boolean> {
    try {
      return await this.client.isHealthy();
    } catch {
      return false;
    }
  }
}

/** How long a passage returned by a vector search is taken as current by get(), and how many are kept. */
const RECENT_MS = 5_000;
const RECENT_MAX = 20_000;

/** A stable UUID (v4 layout) derived from a name, for Meilisearch key uids. */
function uuidFrom(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
