import type { Kysely } from 'kysely';
import { z } from 'zod';
import { configSection, type ConfigFragment } from '../../core/config.js';
import { NotaryError, type ErrorEntry } from '../../core/errors.js';
import { singleHeader, type PaymentMode } from '../../payments/mode.js';
import type { NotaryPlugin } from '../../payments/plugin.js';
import type { MigrationFactory } from '../../storage/migrations.js';
import type { Database } from '../../storage/schema.js';

/**
 * A payment mode that exists only in this folder, as a plug-in: `X-Dummy-Wallet: w_name` pays from a wallet kept in
 * its own table. It adds a config section with a cross-field rule, an error code, a migration and its repository, a
 * CLI command, an OpenAPI security scheme and a challenge, and touches no shared file: registering it is one line.
 */

const dummySchema = z
  .object({
    enabled: z.boolean().default(false),
    /** The word the challenge names the asset with. */
    label: z.string().min(1).default('DUM'),
    /** Rate-limit tier of dummy payers (a defined tier); default default_tier. */
    tier: z.string().optional(),
  })
  .prefault({});

export const dummyConfig: ConfigFragment<z.infer<typeof dummySchema>> = {
  path: ['payments', 'modes', 'dummy'],
  schema: dummySchema,
  refine(section, cfg, issue) {
    if (section.tier !== undefined && !(section.tier in cfg.tiers)) issue(['tier'], `tier "${section.tier}" is not defined in tiers`);
  },
  env: [{ env: 'NOTARY_DUMMY_LABEL', path: ['payments', 'modes', 'dummy', 'label'], kind: 'string' }],
};

export const DUMMY_ERROR_CODES = {
  dummy_wallet_empty: { status: 402, title: 'The dummy wallet holds less than the price of this call', retryable: false },
} as const satisfies Record<string, ErrorEntry>;

declare module '../../core/errors.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are the table's keys
  interface PluginErrorCodes extends Record<keyof typeof DUMMY_ERROR_CODES, true> {}
}

type DummyTables = {
  dummy_wallets: { wallet: string; balance: number };
};

const walletsMigration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('dummy_wallets')
      .addColumn('wallet', 'text', (c) => c.primaryKey())
      .addColumn('balance', 'integer', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('dummy_wallets').ifExists().execute();
  },
});

/** The plug-in's repository: its own table, through the shared connection. */
export class DummyWallets {
  private readonly db: Kysely<DummyTables>;
  constructor(db: Kysely<Database>) {
    this.db = db.withTables<DummyTables>() as unknown as Kysely<DummyTables>;
  }
  async fund(wallet: string, amount: number): Promise<number> {
    await this.db
      .insertInto('dummy_wallets')
      .values({ wallet, balance: amount })
      .onConflict((oc) => oc.column('wallet').doUpdateSet((eb) => ({ balance: eb('dummy_wallets.balance', '+', amount) })))
      .execute();
    return this.balance(wallet);
  }
  async balance(wallet: string): Promise<number> {
    const row = await this.db.selectFrom('dummy_wallets').select('balance').where('wallet', '=', wallet).executeTakeFirst();
    return row?.balance ?? 0;
  }
  /** Takes `amount` when the wallet holds it; false otherwise. */
  async take(wallet: string, amount: number): Promise<boolean> {
    const result = await this.db
      .updateTable('dummy_wallets')
      .set((eb) => ({ balance: eb('balance', '-', amount) }))
      .where('wallet', '=', wallet)
      .where('balance', '>=', amount)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

function dummyMode(wallets: DummyWallets, settings: z.infer<typeof dummySchema>, tier: string): PaymentMode {
  return {
    name: 'dummy',
    securityScheme: { key: 'dummyWallet', scheme: { type: 'apiKey', in: 'header', name: 'X-Dummy-Wallet', description: 'Pays from a dummy wallet.' } },
    identify(request) {
      const wallet = singleHeader(request, 'x-dummy-wallet');
      if (wallet === undefined) return null;
      return {
        mode: 'dummy',
        async authenticate() {
          return {
            mode: 'dummy',
            payerId: `dummy:${wallet}`,
            rateLimits: [{ key: `dummy:${wallet}`, tier }],
            async authorize({ price }) {
              const held = await wallets.balance(wallet);
              if (held < price.credits) throw new NotaryError('dummy_wallet_empty', `wallet ${wallet} holds ${held}; the call costs ${price.credits}: fund it with notary dummy-wallets fund`);
              return {
                async settle() {
                  if (!(await wallets.take(wallet, price.credits))) throw new NotaryError('dummy_wallet_empty', `wallet ${wallet} was emptied meanwhile`);
                  return { creditsUsed: price.credits, headers: { 'X-Dummy-Settlement': `${wallet}:${price.credits}` } };
                },
                async release() {},
              };
            },
          };
        },
      };
    },
    async challenge({ price }) {
      if (!price) return null;
      return { status: 402, wwwAuthenticate: `Dummy amount=${price.credits} asset=${settings.label}`, body: { header: 'X-Dummy-Wallet' } };
    },
  };
}

export const dummyPlugin: NotaryPlugin = {
  name: 'dummy',
  config: [dummyConfig],
  errors: DUMMY_ERROR_CODES,
  migrations: { '9000_dummy_wallets': walletsMigration },
  mode: {
    enabled: (config) => configSection(config, dummyConfig).enabled,
    build: (deps) => {
      const settings = configSection(deps.config, dummyConfig);
      return dummyMode(new DummyWallets(deps.storage.db), settings, settings.tier ?? deps.config.default_tier);
    },
  },
  // Ready when its table answers.
  readiness: async (_config, storage) => (await new DummyWallets(storage.db).balance('w_probe')) >= 0,
  cli(program, context) {
    program
      .command('dummy-wallets')
      .description('fund a dummy wallet')
      .argument('<wallet>', 'the wallet')
      .argument('<amount>', 'credits to add', (v) => Number(v))
      .action(async (wallet: string, amount: number) => {
        const balance = await context.withStorage((storage) => new DummyWallets(storage.db).fund(wallet, amount));
        process.stdout.write(`${wallet}: ${balance}\n`);
      });
  },
};
