/** A response as it is replayed for a retry: status, the headers worth repeating, the exact body. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface IdempotencyBeginInput {
  /** The payer: keys of different payers never meet. */
  scope: string;
  key: string;
  /** Digest of method, path and body: the same key with another request is refused. */
  fingerprint: string;
  /** The request taking the key; it holds the lease until it completes or abandons. */
  requestId: string;
  now: number;
  /** A call still running after this long no longer blocks retries (its process is presumed gone). */
  leaseMs: number;
}

export type IdempotencyBegin =
  /** This request runs the call; `lease` identifies it in complete/abandon. */
  | { state: 'started'; lease: string }
  | { state: 'replay'; response: StoredResponse }
  | { state: 'in_progress' }
  | { state: 'mismatch' };

export interface IdempotencyLease {
  scope: string;
  key: string;
  lease: string;
}

/**
 * The Idempotency-Key record of each payer: the first response to a key is kept until `expiresAt` and replayed for
 * retries of the same request. Implementations (memory, SQL, later Redis) pass one contract suite.
 */
export interface IdempotencyStore {
  begin(input: IdempotencyBeginInput): Promise<IdempotencyBegin>;
  /** Stores the response under the key; only the lease holder's call is recorded. */
  complete(lease: IdempotencyLease, response: StoredResponse, expiresAt: number): Promise<void>;
  /** The call failed: forgets the key so a retry runs again. Only the lease holder's record is removed. */
  abandon(lease: IdempotencyLease): Promise<void>;
}

interface MemoryRecord {
  fingerprint: string;
  lease: string;
  response: StoredResponse | null;
  /** The lease's end while running, the replay's end once completed: after it the key is free again. */
  expiresAt: number;
}

const SWEEP_EVERY = 1000;

/** One process's records in memory: for tests and single-process deployments that accept losing them on restart. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, MemoryRecord>();
  private begins = 0;

  async begin(input: IdempotencyBeginInput): Promise<IdempotencyBegin> {
    if (++this.begins % SWEEP_EVERY === 0) this.sweep(input.now);
    const id = `${input.scope}\u0000${input.key}`;
    const record = this.records.get(id);
    if (!record || record.expiresAt <= input.now) {
      this.records.set(id, { fingerprint: input.fingerprint, lease: input.requestId, response: null, expiresAt: input.now + input.leaseMs });
      return { state: 'started', lease: input.requestId };
    }
    if (record.fingerprint !== input.fingerprint) return { state: 'mismatch' };
    return record.response ? { state: 'replay', response: record.response } : { state: 'in_progress' };
  }

  async complete(lease: IdempotencyLease, response: StoredResponse, expiresAt: number): Promise<void> {
    const record = this.records.get(`${lease.scope}\u0000${lease.key}`);
    if (!record || record.lease !== lease.lease || record.response) return;
    record.response = response;
    record.expiresAt = expiresAt;
  }

  async abandon(lease: IdempotencyLease): Promise<void> {
    const id = `${lease.scope}\u0000${lease.key}`;
    const record = this.records.get(id);
    if (record && record.lease === lease.lease && !record.response) this.records.delete(id);
  }

  /** Drops records whose time is up. */
  sweep(now: number): void {
    for (const [id, record] of this.records) if (record.expiresAt <= now) this.records.delete(id);
  }
}
