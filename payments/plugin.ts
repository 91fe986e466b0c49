import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import {
  registerConfigFragments,
  type ConfigFragment,
  type ConfigInput,
  type NotaryConfig,
  orderPluginErrorCodes,
  registerErrorCodes,
  type ErrorEntry,
} from '../core/index.js';
import type { Storage, Database, Tenant } from '../storage/index.js';
import { registerMigrations, type MigrationFactory } from '../storage/index.js';
import type { Accounts } from './accounts.js';
import type { Catalog } from './catalog.js';
import type { PaymentMode } from './mode.js';
import type { ResponseExtension } from './paid-call.js';
import type { ResponseMember } from './response-members.js';

export type PluginLog = (level: 'info' | 'warn', message: string) => void;

/** What a payment mode may be built from. */
export interface PaymentModeDeps {
  config: NotaryConfig;
  accounts: Accounts;
  /** The prices and tiers in force (operators edit them while serving). */
  catalog: Catalog;
  storage: Storage;
  log: PluginLog;
}

/** One charge in the books, whatever the mode (`notary payments list`). */
export interface LedgerRow {
  created_at: string;
  mode: string;
  /** The payer: an address (pay per call on chain) or a tenant's name (prepaid credits). */
  payer: string;
  /** Atomic units of `asset`, or credits. */
  amount: string;
  asset: string;
  network: string | null;
  transaction: string | null;
  credits: number;
  request_id: string | null;
}

/** A plug-in's routes served on their own (`PluginCliContext.serve`): where they listen, and their log. */
export interface ServedRoutes {
  url: string;
  /** A line in the server's log (human-readable on a terminal, JSON otherwise). */
  log(message: string): void;
  close(): Promise<void>;
}

/** What a plug-in's CLI commands get besides their arguments: the configuration the global options name. */
export interface PluginCliContext {
  /** The configuration, with a command's own options laid over it. */
  config(overrides?: ConfigInput): NotaryConfig;
  /**
   * Serves `routes` as an HTTP server of their own on host:port (request ids, problem+json answers, the configured
   * log format), for a plug-in command that is a server (a payment mode's facilitator).
   */
  serve(routes: readonly PluginRoute[], options: { host: string; port: number; bodyLimitBytes?: number }): Promise<ServedRoutes>;
  /** Runs `fn` on the configured database (opened and migrated, closed after). */
  withStorage<T>(fn: (storage: Storage) => Promise<T>): Promise<T>;
  /** Runs `fn` with the accounts (tenants, credits, tiers in force) of the configured database, closed after. */
  withAccounts<T>(fn: (accounts: Accounts, storage: Storage) => Promise<T>): Promise<T>;
}

/** What a plug-in's services are made from. */
export interface PluginServiceDeps {
  config: NotaryConfig;
  storage: Storage;
}

/**
 * A part of a plug-in that other parts of the service use (a repository, the receipt log): made once per runtime, on
 * first use, by `Runtime.service`. The plug-in exports it; the code that needs it imports it from the plug-in, so
 * the shared code (the runtime) holds it without naming it.
 */
export interface PluginService<T> {
  readonly name: string;
  create(deps: PluginServiceDeps): T;
}

export function pluginService<T>(name: string, create: (deps: PluginServiceDeps) => T): PluginService<T> {
  return { name, create };
}

/** The runtime's services of the registered plug-ins, each made once. */
export type PluginServices = <T>(service: PluginService<T>) => T;

/** What a plug-in's public route answers: a JSON value, or a string of `type`, with its headers. */
export interface PluginReply {
  body: unknown;
  /** A media type to send `body` as (a string); without it the body goes as JSON. */
  type?: string;
  headers?: Readonly<Record<string, string>>;
}

/**
 * A public HTTP route of a plug-in, without any HTTP framework: api/ serves it (and documents its schema in the
 * OpenAPI document). Bad input throws a NotaryError, answered as a problem.
 */
export interface PluginRoute {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  /** JSON Schema of the route as Fastify and the OpenAPI document read it (summary, tags, querystring). */
  readonly schema: Readonly<Record<string, unknown>>;
  /** `body` is the parsed JSON body of a POST (undefined for a GET). */
  handle(request: { query: Readonly<Record<string, string | undefined>>; body?: unknown }): Promise<PluginReply>;
}

/** What a dashboard route of a plug-in is asked: the signed-in member's tenant, the path's parameters, the parsed body. */
export interface TenantRouteRequest {
  tenant: Tenant;
  params: Readonly<Record<string, string>>;
  body: unknown;
}

/**
 * A dashboard endpoint a plug-in adds for the signed-in member's tenant (e.g. a payment mode's party keys), without any HTTP
 * framework: api/ serves it under the dashboard's API behind the member's session and the CSRF check, and hands it
 * that member's tenant (so an id of another tenant's row is "not found" to it). Bad input throws a NotaryError.
 */
export interface PluginTenantRoute {
  readonly method: 'GET' | 'POST';
  /** Fastify's path syntax (`/party-keys/:kid/revoke`). */
  readonly url: string;
  /** JSON Schemas of the body and the path parameters, validated before `handle`. */
  readonly schema?: { readonly body?: Readonly<Record<string, unknown>>; readonly params?: Readonly<Record<string, unknown>> };
  handle(request: TenantRouteRequest): Promise<{ status?: number; body: unknown }>;
}

/**
 * Everything a plug-in (a payment mode, an extension such as signed receipts) adds to the service, from its own folder:
 * its configuration section and rules, its error codes, its migrations, its payment mode (with its OpenAPI security
 * scheme and challenges, see PaymentMode), its CLI commands, its start-up check and its part of the books. The shared
 * code (core/config, core/errors, storage/migrations, api/openapi, api/problem, cli/main, runtime/) loops over the
 * registered plug-ins; none names one. Registering is one line in payments/plugins.ts.
 */
export interface NotaryPlugin {
  readonly name: string;
  readonly config?: readonly ConfigFragment[];
  readonly errors?: Readonly<Record<string, ErrorEntry>>;
  /** By migration name: a name once run is recorded in every database, so it never changes. */
  readonly migrations?: Readonly<Record<string, MigrationFactory>>;
  /** A payment mode: built when `enabled` says so. */
  readonly mode?: {
    enabled(config: NotaryConfig): boolean;
    build(deps: PaymentModeDeps): PaymentMode;
  };
  /** Adds the plug-in's commands to the command line. */
  cli?(program: Command, context: PluginCliContext): void;
  /** Start-up checks that need the network (e.g. a token's decimals on chain): throws invalid_config, logs warnings. */
  startupCheck?(config: NotaryConfig, log: PluginLog): Promise<void>;
  /** Whether what the plug-in depends on answers (GET /readyz lists it under the plug-in's name); only when enabled. */
  readiness?(config: NotaryConfig, storage: Storage): Promise<boolean>;
  /** The members its mode or extension adds to paid 200 bodies, with their JSON Schema (the OpenAPI document's). */
  readonly responseMembers?: readonly ResponseMember[];
  /** Members the plug-in layers on paid responses (e.g. a signed receipt), from its services. */
  extensions?(services: PluginServices): readonly ResponseExtension[];
  /**
   * Made ready before `notary serve` listens (a broken key file stops the start with its reason); returns the lines
   * logged once it listens.
   */
  serving?(services: PluginServices): Promise<readonly string[]>;
  /** Its public HTTP routes (e.g. the receipt log's proofs), made ready before serving. */
  routes?(services: PluginServices): Promise<readonly PluginRoute[]>;
  /** Its dashboard endpoints for the signed-in member's tenant (e.g. a payment mode's keys). */
  tenantRoutes?(services: PluginServices): readonly PluginTenantRoute[];
  /** The plug-in's charges for `notary payments list` (only those of `mode` when given). */
  ledger?(db: Kysely<Database>, options: { mode?: string }): Promise<LedgerRow[]>;
}

const registered: NotaryPlugin[] = [];

/**
 * Registers plug-ins: their config sections, error codes and migrations join the shared ones. Registering the same
 * plug-in again is a no-op; must run before the configuration is read and the database migrated.
 */
export function registerPlugins(list: readonly NotaryPlugin[]): readonly NotaryPlugin[] {
  for (const plugin of list) {
    if (registered.includes(plugin)) continue;
    if (registered.some((p) => p.name === plugin.name)) throw new Error(`plug-in ${plugin.name} is registered twice`);
    if (plugin.errors) registerErrorCodes(plugin.errors);
    if (plugin.config) registerConfigFragments(plugin.config);
    if (plugin.migrations) registerMigrations(plugin.migrations);
    registered.push(plugin);
  }
  orderPluginErrorCodes(registered.flatMap((plugin) => Object.keys(plugin.errors ?? {})));
  return list;
}

/** Every registered plug-in, in registration order. */
export function registeredPlugins(): readonly NotaryPlugin[] {
  return registered;
}
