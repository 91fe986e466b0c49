import { describe, expect, it } from 'vitest';
import { startAddonWorker } from './addon-worker.js';

const fixture = new URL('./addon-worker.fixture.ts', import.meta.url);

describe('startAddonWorker', () => {
  it('stop() lets a worker still loading its addon finish loading, then terminates it', async () => {
    const observed = new SharedArrayBuffer(4);
    const thread = startAddonWorker(fixture, { loadMs: 400, fail: false, observed });
    const exited = new Promise<number>((resolve) => thread.worker.once('exit', resolve));
    await new Promise((resolve) => thread.worker.once('online', resolve));
    expect(thread.loaded).toBe(false);
    const started = performance.now();
    await thread.stop();
    expect(performance.now() - started).toBeLessThan(5_000); // woken by the signal, not by the 15 s limit
    expect(Atomics.load(new Int32Array(observed), 0)).toBe(1);
    expect(thread.loaded).toBe(true);
    await exited;
  });

  it('stop() of a loaded worker terminates it at once', async () => {
    const thread = startAddonWorker(fixture, { loadMs: 0, fail: false, observed: new SharedArrayBuffer(4) });
    await expect.poll(() => thread.loaded, { timeout: 10_000 }).toBe(true);
    const started = performance.now();
    await thread.stop();
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('stop() of a worker that failed before signalling does not wait for a signal that will not come', async () => {
    const thread = startAddonWorker(fixture, { loadMs: 0, fail: true, observed: new SharedArrayBuffer(4) });
    thread.worker.on('error', () => undefined);
    await new Promise((resolve) => thread.worker.once('exit', resolve));
    const started = performance.now();
    await thread.stop();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(thread.loaded).toBe(false);
  });
});
