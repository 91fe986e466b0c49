/**
 * Where a search over a search-engine backend spends its time (issue 34): every request a backend sends to its
 * engine, its round trip and, where the engine reports it, the engine's own time (Meilisearch's processingTimeMs).
 * Off unless a benchmark turns it on; a backend records through recordEngineCall, which costs nothing when off.
 */
export interface EngineCall {
  /** What the request was for ("search", "vector search", "reading vectors"...). */
  what: string;
  /** performance.now() when the request was sent. */
  startedAt: number;
  roundTripMs: number;
  /** The engine's own time from its response; null when the response does not say. */
  engineMs: number | null;
}

export class EngineProbe {
  readonly calls: EngineCall[] = [];

  /**
   * The calls recorded since `from` (an index into calls): their number, the engine's time summed, and the wall time
   * with at least one request in flight (requests sent side by side count once).
   */
  since(from: number): { calls: number; roundTripMs: number; engineMs: number } {
    const taken = this.calls.slice(from);
    const spans = taken.map((c) => [c.startedAt, c.startedAt + c.roundTripMs] as const).sort((a, b) => a[0] - b[0]);
    let covered = 0;
    let end = -Infinity;
    for (const [start, stop] of spans) {
      if (stop > end) covered += stop - Math.max(start, end);
      end = Math.max(end, stop);
    }
    return { calls: taken.length, roundTripMs: covered, engineMs: taken.reduce((acc, c) => acc + (c.engineMs ?? 0), 0) };
  }
}

let active: EngineProbe | null = null;

/** Starts recording every engine call of this process into a fresh probe (replacing any earlier one). */
export function startEngineProbe(): EngineProbe {
  active = new EngineProbe();
  return active;
}

export function stopEngineProbe(): void {
  active = null;
}

/** Whether a probe records (a backend skips its timing work otherwise). */
export function engineProbeOn(): boolean {
  return active !== null;
}

export function recordEngineCall(call: EngineCall): void {
  active?.calls.push(call);
}

/** The engine's own time of a response that carries `processingTimeMs` (a search, a federated search). */
export function processingTimeOf(response: unknown): number | null {
  if (response && typeof response === 'object' && 'processingTimeMs' in response) {
    const ms = (response as { processingTimeMs: unknown }).processingTimeMs;
    return typeof ms === 'number' && Number.isFinite(ms) ? ms : null;
  }
  return null;
}
