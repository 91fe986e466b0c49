import path from 'node:path';
import type { Kysely } from 'kysely';
import { configSection, type NotaryConfig } from '../../core/index.js';
import { pluginService, type NotaryPlugin } from '../plugin.js';
import { addReceiptsCommands } from './cli.js';
import { receiptsConfigFragment } from './config.js';
import { RECEIPT_ERROR_CODES } from './errors.js';
import { receiptLogMigration } from './migrations.js';
import { ReceiptLogStore } from './log-store.js';
import type { Database } from '../../storage/index.js';
import { formatVerifierKey } from './checkpoint.js';
import { ReceiptIssuer } from './issuer.js';
import { ReceiptKeyring } from './keyring.js';
import { ReceiptLog } from './log.js';
import { signedReceiptExtension } from './extension.js';
import { receiptRoutes } from './routes.js';
import { RECEIPT_RESPONSE_MEMBERS } from './response-members.js';

export { receiptsConfigFragment, type ReceiptsConfig } from './config.js';
export { RECEIPT_ERROR_CODES } from './errors.js';
export * from './audit.js';
export * from './checkpoint.js';
export * from './extension.js';
export * from './issuer.js';
export * from './keyring.js';
export * from './log.js';
export * from './merkle.js';
export * from './receipt.js';
export { MAX_LOG_ENTRIES, receiptRoutes } from './routes.js';

export const DEFAULT_KEY_FILE = 'receipt-keys.json';

export interface ReceiptSettings {
  issuer: string;
  origin: string;
  keyFile: string;
  /** True for the data-folder default (created at first start); a configured file must exist. */
  createKeyFile: boolean;
  checkpointIntervalMs: number;
}

/** Issuer, checkpoint origin and key file from the validated config, with their defaults applied. */
export function receiptSettings(cfg: NotaryConfig): ReceiptSettings {
  const receipts = configSection(cfg, receiptsConfigFragment);
  const issuer = (receipts.issuer ?? `http://${cfg.server.host.includes(':') ? `[${cfg.server.host}]` : cfg.server.host}:${cfg.server.port}`).replace(/\/+$/, '');
  const origin = receipts.log_origin ?? `${issuer.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')}/receipt-log`;
  return {
    issuer,
    origin,
    keyFile: receipts.key_file ?? path.join(cfg.data_dir, DEFAULT_KEY_FILE),
    createKeyFile: receipts.key_file === undefined,
    checkpointIntervalMs: receipts.checkpoint_interval_s * 1000,
  };
}

export interface Receipts {
  settings: ReceiptSettings;
  keyring: ReceiptKeyring;
  log: ReceiptLog;
  issuer: ReceiptIssuer;
  /** C2SP verifier keys (`<origin>+<id>+<key>`) of every published key, for checkpoint verification. */
  verifierKeys(): string[];
}

/**
 * Opens the keyring (creating the data-folder default at first start) and the receipt log, and checks that the
 * stored log still matches its last checkpoint. Throws receipt_key_* or receipt_log_corrupt with a clear message.
 */
export async function openReceipts(db: Kysely<Database>, settings: ReceiptSettings, options: { now?: () => Date } = {}): Promise<Receipts> {
  const keyring = ReceiptKeyring.open(settings.keyFile, { createIfMissing: settings.createKeyFile, ...(options.now ? { now: options.now } : {}) });
  const log = new ReceiptLog({
    store: new ReceiptLogStore(db),
    origin: settings.origin,
    keyring,
    checkpointIntervalMs: settings.checkpointIntervalMs,
    ...(options.now ? { now: options.now } : {}),
  });
  await log.selfCheck();
  const issuer = new ReceiptIssuer({ issuer: settings.issuer, keyring, log, ...(options.now ? { now: options.now } : {}) });
  return {
    settings,
    keyring,
    log,
    issuer,
    verifierKeys: () => keyring.all().map((k) => formatVerifierKey(settings.origin, k.publicKey)),
  };
}

/** The runtime's signed receipts: the keyring (created in the data folder at first use) and the receipt log, self-checked. */
export const signedReceipts = pluginService('receipts', ({ config, storage }) => openReceipts(storage.db, receiptSettings(config)));

/**
 * Signed receipts (X-Notary-Sign: required) and their transparency log: the `receipts` section, codes and tables, the
 * receipt on paid responses, the log's public routes and the line `notary serve` says about them.
 */
export const receiptsPlugin: NotaryPlugin = {
  name: 'receipts',
  config: [receiptsConfigFragment],
  errors: RECEIPT_ERROR_CODES,
  responseMembers: RECEIPT_RESPONSE_MEMBERS,
  migrations: { '0014_receipt_log': receiptLogMigration },
  cli: addReceiptsCommands,
  extensions: (services) => [signedReceiptExtension(() => services(signedReceipts))],
  routes: async (services) => receiptRoutes(await services(signedReceipts)),
  async serving(services) {
    const receipts = await services(signedReceipts);
    return [
      `signed receipts: issuer ${receipts.settings.issuer}, key ${receipts.keyring.current().kid} (${receipts.settings.keyFile}), ` +
        `log ${receipts.settings.origin} with ${await receipts.log.treeSize()} receipts`,
    ];
  },
};
