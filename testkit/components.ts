import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** ../shared beside the checkout, or NOTARY_SHARED_DIR. */
export const sharedDir = process.env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '..', 'shared');

/**
 * Whether a suite's outside component (Chromium, PostgreSQL, a corpus in ../shared, ...) is here. Without it the
 * suite is skipped on a developer's machine, but under CI (CI=true) a missing component fails the run instead of
 * silently skipping: use as `describe.runIf(available('Chromium', existsSync(path)))`.
 */
export function available(component: string, present: boolean): boolean {
  if (present) return true;
  if (process.env['CI'] === 'true') {
    throw new Error(`${component} is missing, and CI=true: a suite may not skip in CI (.ci/run installs it)`);
  }
  return false;
}

export function fileAvailable(component: string, file: string): boolean {
  return available(`${component} (${file})`, existsSync(file));
}
