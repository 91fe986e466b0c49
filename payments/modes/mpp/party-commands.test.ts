import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import '../../plugins.js'; // the registered plug-ins: their migrations (party keys) and codes
import { configSchema } from '../../../core/config.js';
import { migrateToLatest, openSqlite, type Storage } from '../../../storage/db.js';
import { Accounts } from '../../accounts.js';
import { publicKeyFromSeed } from '../../crypto/ed25519.js';
import { toBase64Url } from '../../crypto/encoding.js';
import type { PluginCliContext } from '../../plugin.js';
import { Parties } from './parties.js';
import { addPartyCommands } from './party-commands.js';

describe('notary parties revoke', () => {
  let dir: string;
  let storage: Storage;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-party-commands-'));
    storage = openSqlite(path.join(dir, 'notary.sqlite'));
    await migrateToLatest(storage);
  });
  afterAll(async () => {
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const program = (): Command => {
    const context: PluginCliContext = {
      config: () => configSchema.parse({}),
      withStorage: (fn) => fn(storage),
      withAccounts: (fn) => fn(new Accounts(storage.db), storage),
      serve: () => Promise.reject(new Error('the party commands serve nothing')),
    };
    const root = new Command().exitOverride();
    addPartyCommands(root, context);
    return root;
  };

  it('takes a kid that starts with "-" as the kid, not as an unknown option', async () => {
    const parties = new Parties(storage.db);
    const tenant = await new Accounts(storage.db).createTenant('dash', { credits: 1 });
    // About one kid in 64 starts with "-": look for a seed whose key has one.
    let kid = '';
    for (let i = 0; i < 4096 && !kid.startsWith('-'); i++) {
      const seed = new Uint8Array(32);
      new DataView(seed.buffer).setUint32(0, i);
      const { key } = await parties.addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
      kid = key.kid;
    }
    expect(kid.startsWith('-')).toBe(true);

    const written = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await program().parseAsync(['node', 'notary', 'parties', 'revoke', kid]);
    } finally {
      written.mockRestore();
    }
    const [revoked] = (await parties.listKeys([tenant], tenant.id)).filter((k) => k.kid === kid);
    expect(revoked?.revoked_at).not.toBeNull();
  });
});
