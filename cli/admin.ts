import type { NotaryConfig } from '../core/index.js';
import { NotaryError } from '../core/index.js';
import { Runtime, silentLog } from '../runtime/index.js';

/** Reads a password from standard input: its first line (piped), or typed without echo at a terminal. */
async function readPassword(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += String(chunk);
    return text.split(/\r?\n/)[0] ?? '';
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const onData = (char: string) => {
      for (const c of char) {
        if (c === '\r' || c === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.removeListener('data', onData);
          process.stderr.write('\n');
          resolve(value);
          return;
        }
        if (c === '\u0003') {
          stdin.setRawMode(false);
          reject(new NotaryError('invalid_request', 'cancelled'));
          return;
        }
        if (c === '\u007f' || c === '\b') value = value.slice(0, -1);
        else value += c;
      }
    };
    stdin.on('data', onData);
  });
}

/** `notary admin create --email E`: an operator account; the password comes from standard input (never an argument). */
export async function adminCreateCommand(cfg: NotaryConfig, opts: { email: string }): Promise<void> {
  const password = await readPassword(`password for ${opts.email} (at least ${cfg.dashboard.password_min_length} characters): `);
  if (process.stdin.isTTY) {
    const again = await readPassword('again: ');
    if (again !== password) throw new NotaryError('invalid_request', 'the two passwords differ');
  }
  const ctx = await Runtime.open(cfg, { log: silentLog });
  try {
    const user = await ctx.users.createOperator(opts.email, password);
    process.stdout.write(`created operator ${user.email} (${user.id}); sign in at /dashboard/\n`);
  } finally {
    await ctx.close();
  }
}

export async function adminListCommand(cfg: NotaryConfig, opts: { json?: boolean }): Promise<void> {
  const ctx = await Runtime.open(cfg, { log: silentLog });
  try {
    const users = await ctx.users.list();
    const rows = users.map((u) => ({ id: u.id, email: u.email, role: u.role, tenant_id: u.tenant_id, created_at: u.created_at, last_signin_at: u.last_signin_at }));
    if (opts.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else if (rows.length === 0) process.stdout.write('no users\n');
    else for (const u of rows) process.stdout.write(`${u.id}  ${u.role.padEnd(8)}  ${u.email}${u.tenant_id ? `  tenant ${u.tenant_id}` : ''}  last sign-in ${u.last_signin_at ?? 'never'}\n`);
  } finally {
    await ctx.close();
  }
}
