import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { NotaryError } from '../core/index.js';

/** The holder touches its lock this often; a lock untouched for STALE_MS is taken over (its process is gone). */
const HEARTBEAT_MS = 2_000;
const STALE_MS = 15_000;
const POLL_MS = 200;

export function modelLockFile(cacheDir: string, modelName: string): string {
  return path.join(cacheDir, `.${modelName}.lock`);
}

interface LockOwner {
  pid: number;
  host: string;
  since: string;
}

function readOwner(file: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a lock's owner is gone: a process of this host that no longer runs, or (another host or container sharing
 * the folder) a lock whose heartbeat stopped.
 */
function isStale(file: string): boolean {
  let mtime: number;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    return false; // released meanwhile: the next attempt takes it
  }
  const owner = readOwner(file);
  if (owner && owner.host === hostname() && !alive(owner.pid)) return true;
  return Date.now() - mtime > STALE_MS;
}

/**
 * Takes `<cacheDir>/.<name>.lock` (created exclusively; kept fresh by a heartbeat), waiting at most `timeoutMs` for
 * another process that holds it. Returns the release function. Two processes starting at once thus download a model
 * once: the second waits, then finds the files in place.
 */
export async function acquireModelLock(
  cacheDir: string,
  modelName: string,
  options: { timeoutMs: number; onWait?: (owner: LockOwner | null) => void },
): Promise<() => void> {
  const file = modelLockFile(cacheDir, modelName);
  const deadline = Date.now() + options.timeoutMs;
  let told = false;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() } satisfies LockOwner));
      closeSync(fd);
      const beat = setInterval(() => {
        try {
          const now = new Date();
          utimesSync(file, now, now);
        } catch {
          // taken over after a long stall: the download that follows re-checks every file against its pin
        }
      }, HEARTBEAT_MS);
      beat.unref();
      return () => {
        clearInterval(beat);
        const owner = readOwner(file);
        if (owner?.pid === process.pid && owner.host === hostname()) rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (isStale(file)) {
      // Moved aside first: of two processes taking over the same stale lock, one rename succeeds.
      const aside = `${file}.stale-${process.pid}`;
      try {
        renameSync(file, aside);
        rmSync(aside, { force: true });
      } catch {
        // someone else took it over
      }
      continue;
    }
    if (!told) {
      options.onWait?.(readOwner(file));
      told = true;
    }
    if (Date.now() > deadline) {
      const owner = readOwner(file);
      throw new NotaryError(
        'model_unavailable',
        `another process (${owner ? `pid ${owner.pid} on ${owner.host} since ${owner.since}` : 'unknown'}) has been fetching ${modelName} for more than ` +
          `${Math.round(options.timeoutMs / 1000)} s (lock ${file}); try again later, or remove the lock if no such process runs`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
