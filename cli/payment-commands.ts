import { InvalidArgumentError, type Command } from 'commander';
import type { ConfigInput, NotaryConfig } from '../core/index.js';
import { registeredPlugins, type PluginCliContext } from '../runtime/plugins.js';

/** The configuration the global options name, with a command's overrides. */
type ConfigOf = (overrides?: ConfigInput) => NotaryConfig;

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/** The books of paid calls, whatever the mode: the registered payment modes are the values of `--mode`. */
export function addPaymentBooksCommands(program: Command, configOf: ConfigOf): void {
  const payments = program.command('payments').description('the books of paid calls');
  payments
    .command('list')
    .description('every charged call: mode, payer, amount, asset, network, transaction, request id')
    .option('--mode <mode>', `only this payment mode (${registeredPlugins().filter((p) => p.mode).map((p) => p.name).join(', ')})`)
    .option('--limit <n>', 'only the newest n', positiveInt)
    .option('--csv', 'CSV with a header row')
    .option('--json', 'machine-readable output')
    .action(async (opts: { mode?: string; limit?: number; csv?: boolean; json?: boolean }) => {
      const { paymentsListCommand } = await import('./payments.js');
      await paymentsListCommand(configOf(), opts);
    });
  payments
    .command('reconcile')
    .description('decide pay-per-call settlements whose outcome was never heard (a settle that timed out) from their chain')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { paymentsReconcileCommand } = await import('./payments.js');
      await paymentsReconcileCommand(configOf(), opts);
    });
}

/** What a plug-in's commands get: the configuration, and the database of it (opened, migrated, closed after). */
export function pluginCliContext(configOf: ConfigOf): PluginCliContext {
  return {
    config: (overrides) => configOf(overrides),
    async serve(routes, options) {
      const { buildRoutesApp } = await import('../api/index.js');
      const { serverLoggerOptions } = await import('./log-format.js');
      const app = await buildRoutesApp({ routes, logger: serverLoggerOptions(configOf().log_level), ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}) });
      const url = await app.listen({ host: options.host, port: options.port });
      return { url, log: (message) => app.log.info(message), close: () => app.close() };
    },
    async withStorage(fn) {
      const { Runtime, silentLog } = await import('../runtime/index.js');
      const runtime = await Runtime.open(configOf(), { log: silentLog });
      try {
        return await fn(runtime.storage);
      } finally {
        await runtime.close();
      }
    },
    async withAccounts(fn) {
      const { Runtime, silentLog } = await import('../runtime/index.js');
      const runtime = await Runtime.open(configOf(), { log: silentLog });
      try {
        return await fn(runtime.accounts, runtime.storage);
      } finally {
        await runtime.close();
      }
    },
  };
}
