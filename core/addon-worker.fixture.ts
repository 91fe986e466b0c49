/**
 * A worker for core/addon-worker.test.ts standing in for one that loads a native addon: it takes `loadMs` to "load"
 * (blocked in Atomics.wait, as a thread is inside an addon's registration), records in `observed` that it got there,
 * then signals; with `fail` it throws before signalling.
 */
import { workerData } from 'node:worker_threads';

const data = workerData as { loadMs: number; fail: boolean; observed: SharedArrayBuffer; addonLoaded: SharedArrayBuffer };
if (data.fail) throw new Error('the addon did not load');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, data.loadMs);
Atomics.store(new Int32Array(data.observed), 0, 1);
const loaded = new Int32Array(data.addonLoaded);
Atomics.store(loaded, 0, 1);
Atomics.notify(loaded, 0);
setInterval(() => undefined, 1_000);
