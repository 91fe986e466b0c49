import { Worker } from 'node:worker_threads';

/** The field of `workerData` that carries the flag; the worker sets it once its native addon is loaded. */
export const ADDON_LOADED_FIELD = 'addonLoaded';

/** How long `stop()` waits at most for a worker still loading its addon before it terminates it anyway. */
const LOAD_WAIT_MS = 15_000;

export interface AddonWorker {
  readonly worker: Worker;
  /** Whether the worker signalled that its addon is loaded. */
  readonly loaded: boolean;
  /** Terminates the worker, first waiting (bounded) until it finished loading its native addon or exited. */
  stop(): Promise<void>;
}

/**
 * Starts a worker thread that loads a native addon (better-sqlite3, usearch). Terminating a thread while the addon
 * registers itself aborts the whole process (`FATAL ERROR: Error::New napi_get_last_error_info` from the addon's
 * `napi_register_module_v1`), so `stop()` waits for the worker's signal first. The worker signals with
 * `Atomics.store` then `Atomics.notify` on `new Int32Array(workerData.addonLoaded)`, cell 0, value 1, right after its first use of the addon; it must not
 * import this file (workers run with Node's type stripping and import nothing of ours).
 */
export function startAddonWorker(url: URL, data: object): AddonWorker {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(url, { workerData: { ...data, [ADDON_LOADED_FIELD]: flag } });
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const cell = new Int32Array(flag);
  return {
    worker,
    get loaded() {
      return Atomics.load(cell, 0) === 1;
    },
    async stop() {
      if (!exited && Atomics.load(cell, 0) === 0) {
        const waited = Atomics.waitAsync(cell, 0, 0, LOAD_WAIT_MS);
        if (waited.async) await Promise.race([waited.value, exit]);
      }
      await worker.terminate();
    },
  };
}
