import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestPostgres {
  url: string;
  stop(): void;
}

function pgBinDir(): string {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) throw new Error('PostgreSQL is not installed (apt-get install postgresql); .ci/run installs it');
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = path.join(root, v, 'bin');
    if (existsSync(path.join(dir, 'initdb'))) return dir;
  }
  throw new Error(`no initdb under ${root}`);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A throwaway PostgreSQL cluster on 127.0.0.1 from Debian's binaries, or the server NOTARY_TEST_DATABASE_URL names.
 * initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const external = process.env['NOTARY_TEST_DATABASE_URL'];
  if (external) return { url: external, stop: () => {} };
  const bin = pgBinDir();
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-pg-'));
  chmodSync(dir, 0o777);
  const dataDir = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const full = asRoot ? ['-u', 'postgres', '--', path.join(bin, cmd), ...args] : args;
    const exe = asRoot ? 'runuser' : path.join(bin, cmd);
    const res = spawnSync(exe, full, { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`${cmd} failed: ${res.stderr || res.stdout}`);
  };
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  run('pg_ctl', [
    '-D', dataDir, '-l', path.join(dir, 'log'), '-w', '-t', '60',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
    'start',
  ]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        const args = ['-D', dataDir, '-m', 'immediate', '-w', 'stop'];
        if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), ...args], { stdio: 'ignore' });
        else execFileSync(path.join(bin, 'pg_ctl'), args, { stdio: 'ignore' });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A fresh database inside the server, so suites do not see each other's rows. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}"`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database made by createDatabase (its connections must be closed). */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}"`);
  } finally {
    await client.end();
  }
}
