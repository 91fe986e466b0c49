import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { available, repoRoot } from '../testkit/components.js';

/**
 * The MPP vectors checked by a second implementation that shares nothing with ours: Python's `cryptography` for
 * Ed25519, exact fractions for the split (spec/verify-python/mpp_check.py). Debian's python3-cryptography
 * (scripts/install.sh test installs it); NOTARY_MPP_PYTHON names another interpreter.
 */
const python = process.env['NOTARY_MPP_PYTHON'] ?? '/usr/bin/python3';
const hasCryptography = spawnSync(python, ['-c', 'import cryptography'], { encoding: 'utf8' }).status === 0;

describe.runIf(available(`Python with cryptography (${python})`, hasCryptography))('MPP vectors in Python', () => {
  it('verifies every key, canonical form, signature, split and refused signature of spec/vectors', () => {
    const run = spawnSync(python, [path.join(repoRoot, 'spec/verify-python/mpp_check.py'), path.join(repoRoot, 'spec/vectors')], { encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('0 failure(s)');
    // 26 splits, 5 envelopes with their keys and signatures, 3 refused signatures.
    expect(lines.filter((l) => l.startsWith('ok ')).length).toBeGreaterThanOrEqual(80);
    expect(lines.filter((l) => l.startsWith('FAIL')).length).toBe(0);
  });
});
