#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so the checkout needs no build step.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIN_NODE = 22;
if (Number(process.versions.node.split('.')[0]) < MIN_NODE) {
  // An older system Node: run under the Node that scripts/install.sh put in the cache (scripts/node-env.sh), if any.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const version = process.env.NOTARY_NODE_VERSION ?? readFileSync(path.join(root, '.node-version'), 'utf8').trim();
  const cache = process.env.NOTARY_NODE_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'notary', 'node');
  const node = path.join(cache, `node-v${version}`, 'bin', 'node');
  if (existsSync(node)) {
    const child = spawn(node, process.argv.slice(1), { stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
  } else {
    process.stderr.write(
      `notary needs Node.js ${MIN_NODE} or newer; this is ${process.version}. Run scripts/install.sh: it installs Node ${version} into ${cache} when the system's Node is older.\n`,
    );
    process.exit(1);
  }
} else {
  await run();
}

async function run() {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../cli/main.ts');
  await main(process.argv);
}
