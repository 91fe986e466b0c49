import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../testkit/cli.js';

/**
 * What a newcomer sees in a new shell whose system Node is older than the project's (Debian 12 ships Node 20; the
 * project installs Node 24 into a cache folder, scripts/node-env.sh): `npx notary` without npm's engine warnings, and
 * the quickstart saying "notary: using Node ..." once.
 */
const run = promisify(execFile);

/** A folder on PATH (or the usual system ones) holding a `node` older than 22 and its `npx`: the system Node. */
async function olderSystemNode(): Promise<string | null> {
  const projectNode = process.env['NOTARY_NODE_DIR'] ? path.join(process.env['NOTARY_NODE_DIR'], 'bin') : '';
  const dirs = [...(process.env['PATH'] ?? '').split(':'), '/usr/local/bin', '/usr/bin', '/bin'];
  for (const dir of new Set(dirs)) {
    if (!dir || dir === projectNode || !existsSync(path.join(dir, 'node')) || !existsSync(path.join(dir, 'npx'))) continue;
    const { stdout } = await run(path.join(dir, 'node'), ['-p', 'process.versions.node.split(".")[0]'], { timeout: 10_000 });
    if (Number(stdout.trim()) < 22) return dir;
  }
  return null;
}

/** The environment of a new login shell: the system's PATH, no npm_* variables of the npm that runs this test. */
function freshShellEnv(systemDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: process.env['HOME'], PATH: `${systemDir}:/usr/local/bin:/usr/bin:/bin` };
  for (const name of ['NOTARY_NODE_CACHE', 'XDG_CACHE_HOME', 'NOTARY_NODE_VERSION']) if (process.env[name]) env[name] = process.env[name];
  return env;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a new shell whose system Node is older than the project needs', () => {
  it('runs `npx notary` without npm engine warnings', async () => {
    // npm checks package.json's "engines" against the Node that runs npm (the system's) before bin/notary.js can hand
    // over to the project's Node: an "engines" field warns on every npx there, so there is none (bin/notary.js and
    // .node-version say what Node the code needs).
    const systemDir = await olderSystemNode();
    if (systemDir) {
      // A new npm cache: npx keeps what it learnt of the package in its cache (~/.npm/_npx), so a used one may hide the warning.
      const npmCache = mkdtempSync(path.join(tmpdir(), 'notary-npm-cache-'));
      dirs.push(npmCache);
      const env = { ...freshShellEnv(systemDir), npm_config_cache: npmCache };
      const { stdout, stderr } = await run(path.join(systemDir, 'npx'), ['notary', '--version'], { cwd: repoRoot, env, timeout: 120_000 });
      expect(stdout).toMatch(/^\d+\.\d+\.\d+ \(node (\d+)\./);
      expect(Number(/\(node (\d+)\./.exec(stdout)?.[1])).toBeGreaterThanOrEqual(22);
      expect(stderr).not.toMatch(/EBADENGINE|npm warn/i);
    }
    // Where the system Node is new enough npm has nothing to warn about; the cause stays out of package.json anyway.
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { engines?: unknown; bin?: Record<string, string> };
    expect(pkg.engines).toBeUndefined();
    expect(pkg.bin?.['notary']).toBe('bin/notary.js');
  });

  it('says "notary: using Node ..." once in the quickstart', async () => {
    const systemDir = await olderSystemNode();
    // A copy of the scripts in a tree whose npm packages look installed for the project's Node: install.sh has
    // nothing to install, and bin/notary.js is a stand-in that says it was started.
    const root = mkdtempSync(path.join(tmpdir(), 'notary-quickstart-'));
    dirs.push(root);
    mkdirSync(path.join(root, 'scripts'));
    mkdirSync(path.join(root, 'bin'));
    mkdirSync(path.join(root, 'node_modules', 'better-sqlite3'), { recursive: true });
    for (const file of ['scripts/quickstart.sh', 'scripts/install.sh', 'scripts/node-env.sh', '.node-version']) {
      copyFileSync(path.join(repoRoot, file), path.join(root, file));
    }
    writeFileSync(path.join(root, 'package-lock.json'), '{}\n');
    writeFileSync(path.join(root, 'node_modules', '.package-lock.json'), '{}\n');
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(root, 'package-lock.json'), past, past);
    writeFileSync(path.join(root, 'node_modules', '.notary-node-abi'), `${process.versions.modules}\n`);
    writeFileSync(path.join(root, 'bin', 'notary.js'), 'console.log(`started: ${process.argv.slice(2).join(" ")} on node ${process.versions.node}`);\n');
    const env = systemDir ? freshShellEnv(systemDir) : { ...process.env };
    const { stdout, stderr } = await run('bash', [path.join(root, 'scripts', 'quickstart.sh'), '--port', '9000'], { cwd: root, env, timeout: 120_000 });
    expect(stdout).toMatch(/^started: serve --port 9000 on node (2[2-9]|[3-9]\d)\./);
    const said = stderr.split('\n').filter((line) => line.startsWith('notary: using Node'));
    expect(said, stderr).toHaveLength(systemDir ? 1 : 0);
    // The test command does the same: Node on PATH before install.sh runs.
    const testScript = readFileSync(path.join(repoRoot, 'scripts', 'test.sh'), 'utf8');
    expect(testScript.indexOf('. scripts/node-env.sh')).toBeGreaterThan(-1);
    expect(testScript.indexOf('. scripts/node-env.sh')).toBeLessThan(testScript.indexOf('bash scripts/install.sh'));
  });
});
