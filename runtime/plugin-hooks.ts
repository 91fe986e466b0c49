import type { Kysely } from 'kysely';
import type { NotaryConfig } from '../core/index.js';
import type { ResponseExtension, LedgerRow, PluginLog, PluginRoute, PluginServices } from '../payments/index.js';
import type { Storage, Database } from '../storage/index.js';
import { registeredPlugins } from './plugins.js';

/** What the runtime asks of every registered plug-in, in registration order; none is named. */

/** The members the plug-ins layer on paid responses. */
export function pluginExtensions(services: PluginServices): ResponseExtension[] {
  return registeredPlugins().flatMap((plugin) => plugin.extensions?.(services) ?? []);
}

/** Every charge, oldest first, from each plug-in's books (only `mode`'s when given; the newest `limit`). */
export async function pluginLedger(db: Kysely<Database>, options: { mode?: string; limit?: number }): Promise<LedgerRow[]> {
  const rows: LedgerRow[] = [];
  for (const plugin of registeredPlugins()) rows.push(...((await plugin.ledger?.(db, options.mode !== undefined ? { mode: options.mode } : {})) ?? []));
  rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  return options.limit !== undefined ? rows.slice(-options.limit) : rows;
}

/** The plug-ins' start-up checks that need the network (e.g. a token's decimals on chain); throws invalid_config. */
export async function pluginStartupChecks(config: NotaryConfig, log: PluginLog): Promise<void> {
  for (const plugin of registeredPlugins()) await plugin.startupCheck?.(config, log);
}

/** Makes the plug-ins ready to serve; returns what they say once the server listens. */
export async function pluginsServing(services: PluginServices): Promise<string[]> {
  return (await Promise.all(registeredPlugins().map((plugin) => plugin.serving?.(services) ?? []))).flat();
}

/** The plug-ins' public HTTP routes. */
export async function pluginRoutes(services: PluginServices): Promise<PluginRoute[]> {
  return (await Promise.all(registeredPlugins().map((plugin) => plugin.routes?.(services) ?? []))).flat();
}

/** The readiness of what enabled plug-ins depend on, by plug-in name (a check that throws is not ready). */
export async function pluginReadiness(config: NotaryConfig, storage: Storage): Promise<Record<string, boolean>> {
  const entries = await Promise.all(
    registeredPlugins()
      .filter((plugin) => plugin.readiness && (plugin.mode?.enabled(config) ?? true))
      .map(async (plugin) => [plugin.name, await (plugin.readiness?.(config, storage) ?? Promise.resolve(true)).catch(() => false)] as const),
  );
  return Object.fromEntries(entries);
}
