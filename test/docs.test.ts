import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../cli/main.js';
import { allEnvBindings } from '../core/config.js';
import { allErrorCodes } from '../core/errors.js';
import '../runtime/plugins.js'; // the plug-ins' and index backends' codes and settings belong to the registry too
import { repoRoot } from '../testkit/cli.js';
import { configKeys, documentedKeys } from './support/config-keys.js';
import { configReferenceTable, withReference } from '../scripts/config-reference.js';
import { CONFIG_TEXTS } from '../scripts/config-reference-texts.js';

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

  it('docs/configuration.md lists every environment variable the config reads', () => {
    const page = readFileSync(path.join(repoRoot, 'docs/configuration.md'), 'utf8');
    for (const binding of allEnvBindings()) expect(page, binding.env).toContain(`\`${binding.env}\``);
  });

  it('docs/cli.md names every command with every option, and nothing the command line lacks', () => {
    const page = readFileSync(path.join(repoRoot, 'docs/cli.md'), 'utf8');
    const program = buildProgram();
    const leaves = new Map<string, Set<string>>();
    const walk = (command: Command, prefix: string[]) => {
      for (const sub of command.commands) {
        const names = [...prefix, sub.name()];
        if (sub.commands.length > 0) walk(sub, names);
        else leaves.set(names.join(' '), new Set(sub.options.map((o) => o.long ?? '').filter((l) => l !== '')));
      }
    };
    walk(program, []);
    const global = new Set(program.options.map((o) => o.long ?? ''));
    const documented = new Map<string, Set<string>>();
    for (const [, span] of page.matchAll(/`notary ([^`]+)`/g)) {
      const words = (span ?? '').split(/\s+/);
      const stop = words.findIndex((w) => /^[[<"-]/.test(w));
      const name = words.slice(0, stop === -1 ? words.length : stop).join(' ');
      const options = documented.get(name) ?? new Set<string>();
      for (const [flag] of (span ?? '').matchAll(/--[a-z][a-z0-9-]*/g)) options.add(flag);
      documented.set(name, options);
    }
    const problems: string[] = [];
    for (const [name, options] of documented) {
      const real = leaves.get(name);
      if (!real) problems.push(`docs/cli.md documents "notary ${name}", which the command line does not have`);
      for (const flag of options) if (real && !real.has(flag) && !global.has(flag)) problems.push(`notary ${name} has no option ${flag}`);
    }
    for (const [name, options] of leaves) {
      if (!documented.has(name)) problems.push(`docs/cli.md does not document "notary ${name}"`);
      else for (const flag of options) if (!documented.get(name)?.has(flag)) problems.push(`docs/cli.md does not show ${flag} of notary ${name}`);
    }
    expect(problems).toEqual([]);
  });

  it('docs/configuration.md has a row for every setting of the schema, and names none it lacks', () => {
    const documented = documentedKeys(readFileSync(path.join(repoRoot, 'docs/configuration.md'), 'utf8'));
    const keys = configKeys();
    expect(keys.length).toBeGreaterThan(100);
    expect(keys.filter((key) => !documented.has(key)), 'settings without a row').toEqual([]);
    expect([...documented].filter((key) => !keys.includes(key)), 'rows naming no setting').toEqual([]);
  });

  it("docs/configuration.md's settings table is the one scripts/config-reference.ts makes from the schema (defaults, variables)", () => {
    const page = readFileSync(path.join(repoRoot, 'docs/configuration.md'), 'utf8');
    expect(withReference(page, configReferenceTable()), 'stale: run npx tsx scripts/config-reference.ts').toBe(page);
  });

  it('the configuration reference refuses a setting without a row, and a default written beside the schema', () => {
    const rows = CONFIG_TEXTS.filter((row) => !('keys' in row && row.keys.includes('server.body_limit_bytes')));
    expect(() => configReferenceTable(rows)).toThrow(/server\.body_limit_bytes: a setting of the schema without a row/);
    const doubled = CONFIG_TEXTS.map((row) => ('keys' in row && row.keys[0] === 'data_dir' ? { ...row, unset: { data_dir: '`./data`' } } : row));
    expect(() => configReferenceTable(doubled)).toThrow(/data_dir: the schema has its default/);
  });

  it('every link between README.md and docs/ leads to a file and a heading that exist', () => {
    const pages = ['README.md', ...readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(path.join(repoRoot, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file = '', anchor] = target.split('#');
        const resolved = file === '' ? path.join(repoRoot, page) : path.resolve(path.dirname(path.join(repoRoot, page)), file);
        if (!existsSync(resolved)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README stays a front page of at most 250 lines', () => {
    expect(readFileSync(path.join(repoRoot, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });
});

/** GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces to dashes, -1 -2 for repeats), plus <a id>. */
function headingAnchors(page: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, text = ''] of page.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const [, id = ''] of page.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(id);
  return anchors;
}
