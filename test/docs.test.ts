import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allEnvBindings } from '../core/config.js';
import { allErrorCodes } from '../core/errors.js';
import '../payments/plugins.js'; // the plug-ins' codes and settings belong to the registry too
import { repoRoot } from './support/cli.js';

describe('docs match the code', () => {
  it('docs/errors.md documents every error code with its status', () => {
    const page = readFileSync(path.join(repoRoot, 'docs/errors.md'), 'utf8');
    for (const [code, entry] of Object.entries(allErrorCodes())) {
      expect(page, code).toContain(`<a id="${code}"></a>\`${code}\` | ${entry.status} |`);
    }
  });

  it('docs/errors.md says for every code what the caller or operator can do', () => {
    const page = readFileSync(path.join(repoRoot, 'docs/errors.md'), 'utf8');
    for (const code of Object.keys(allErrorCodes())) {
      const row = page.split('\n').find((line) => line.startsWith(`| <a id="${code}"></a>`)) ?? '';
      const cells = row.split('|').map((cell) => cell.trim()).filter((cell) => cell !== '');
      const remedy = cells[cells.length - 1] ?? '';
      expect(cells.length, code).toBeGreaterThanOrEqual(4);
      expect(remedy, `${code}: the "what to do" column`).not.toMatch(/^(—|-|)$/);
    }
  });

  it('the README lists every environment variable the config reads', () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    for (const binding of allEnvBindings()) expect(readme, binding.env).toContain(`\`${binding.env}\``);
  });
});
