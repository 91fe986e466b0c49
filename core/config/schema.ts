import { z } from 'zod';
import { crawlerSection, extractSection } from './crawl.js';
import { dashboardSection } from './dashboard.js';
import type { EnvBinding } from './env.js';
import { paymentsSection, pricingSchema, tiersSchema } from './pricing.js';
import { embeddingsSection, indexerSection, indexerShape as sharedIndexerShape, rerankerSection, searchSection } from './search.js';
import { serverSection, storageSection, storesSection } from './server.js';
import { webhooksSection } from './webhooks.js';
import { mapSection } from './map.js';

/** Every payment mode's section has at least this (the rest is the mode's own fragment). */
const modeSectionBase = z.looseObject({ enabled: z.boolean().optional() });

/**
 * The shared sections. `payments.modes` and the plug-ins' top-level sections are filled in from the registered
 * fragments (`buildConfigSchema`); here `modes` only gives the type every mode's section has.
 */
const sharedShape = {
  data_dir: z.string().min(1).default('./data'),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  server: serverSection,
  /** Shared stores of a scaled-out deployment: rate limits and idempotency records (memory/SQL, or Redis). */
  stores: storesSection,
  storage: storageSection,
  crawler: crawlerSection,
  extract: extractSection,
  indexer: indexerSection,
  reranker: rerankerSection,
  embeddings: embeddingsSection,
  search: searchSection,
  /**
   * What each call costs, in credits and, for pay-per-call modes, in money. One place: payments/pricing.ts reads it.
   * These are the defaults: an operator's edits in the dashboard are kept in the database and override them.
   */
  pricing: pricingSchema,
  payments: paymentsSection.extend({ modes: z.record(z.string(), modeSectionBase).prefault({}) }).prefault({}),
  tiers: tiersSchema,
  default_tier: z.string().default('free'),
  dashboard: dashboardSection,
  webhooks: webhooksSection,
  map: mapSection,
};
type SharedSchema = z.ZodObject<typeof sharedShape>;

/** The validated configuration: the shared sections; a plug-in reads its own section with `configSection`. */
export type NotaryConfig = z.infer<SharedSchema>;
/** What a config file, the environment or overrides may give: the shared sections and any plug-in's section. */
export type ConfigInput = z.input<SharedSchema> & { [section: string]: unknown };

/** Reports a problem at a path under the fragment's section. */
export type ConfigIssue = (path: readonly (string | number)[], message: string) => void;

/**
 * A plug-in's part of the configuration: a section under `payments.modes.<name>` (a payment mode), under
 * `indexer.<name>` (an index backend) or at the top level (an extension's), its own cross-field rules, its environment
 * variables and its paths to resolve.
 */
export interface ConfigFragment<T = unknown> {
  path: readonly ['payments', 'modes', string] | readonly ['indexer', string] | readonly [string];
  /** The section's schema, defaults included (an absent section parses as its defaults). */
  schema: z.ZodType<T, unknown>;
  /** Cross-field rules (e.g. settings required when enabled); `issue` paths are relative to the section. */
  refine?(section: T, cfg: NotaryConfig, issue: ConfigIssue): void;
  /** Rules the plug-in sets on shared settings (e.g. the storage it needs); `issue` paths start at the root. */
  rules?(cfg: NotaryConfig, issue: ConfigIssue): void;
  env?: readonly EnvBinding[];
  /** Makes relative paths absolute after validation (against the working directory). */
  resolve?(section: T, cfg: NotaryConfig): void;
  /**
   * Earlier places of the section's keys (key → its old path from the root, e.g. a shared `search.*` setting that
   * became the plug-in's): still read, with a warning that names the new key; the new key wins when both are set.
   */
  formerly?: Readonly<Record<string, readonly string[]>>;
}

const fragments: ConfigFragment[] = [];
let backendNames: readonly string[] = [];
let built: z.ZodType<NotaryConfig, unknown> | undefined;

/** The values `indexer.backend` accepts: the registered index backends' names, the first the default. */
export function registerIndexBackendNames(names: readonly string[]): void {
  backendNames = [...names];
  built = undefined;
}

/** Adds plug-ins' sections to the configuration (again with the same fragment is a no-op); done by their registration. */
export function registerConfigFragments(list: readonly ConfigFragment[]): void {
  for (const fragment of list) {
    if (fragments.includes(fragment)) continue;
    const key = fragment.path.join('.');
    if (fragments.some((f) => f.path.join('.') === key)) throw new Error(`config section ${key} is registered twice`);
    fragments.push(fragment);
    built = undefined;
  }
}

export function configFragments(): readonly ConfigFragment[] {
  return fragments;
}

/** A plug-in's section of a validated configuration, typed by its fragment. */
export function configSection<T>(cfg: NotaryConfig, fragment: ConfigFragment<T>): T {
  let node: unknown = cfg;
  for (const key of fragment.path) node = (node as Record<string, unknown>)[key];
  if (node === undefined) throw new Error(`config section ${fragment.path.join('.')} is missing: its plug-in was registered after the configuration was read`);
  return node as T;
}

function sharedRules(cfg: NotaryConfig, issue: (path: (string | number)[], message: string) => void): void {
  if (!(cfg.default_tier in cfg.tiers)) issue(['default_tier'], `tier "${cfg.default_tier}" is not defined in tiers`);
  if (cfg.payments.anonymous_tier !== undefined && !(cfg.payments.anonymous_tier in cfg.tiers)) {
    issue(['payments', 'anonymous_tier'], `tier "${cfg.payments.anonymous_tier}" is not defined in tiers`);
  }
  const modes = Object.values(cfg.payments.modes);
  if (modes.length > 0 && !modes.some((mode) => mode.enabled)) issue(['payments', 'modes'], 'at least one payment mode must be enabled');
}

function deploymentRules(cfg: NotaryConfig, issue: (path: (string | number)[], message: string) => void): void {
  if (cfg.storage.driver === 'postgres' && !cfg.storage.postgres_url) issue(['storage', 'postgres_url'], 'required when storage.driver is postgres');
  if (cfg.crawler.shared_frontier && cfg.storage.driver !== 'postgres') {
    issue(['crawler', 'shared_frontier'], 'a shared frontier needs storage.driver postgres (NOTARY_STORAGE=postgres)');
  }
  if (cfg.stores.backend === 'redis' && !cfg.stores.redis_url) issue(['stores', 'redis_url'], 'required when stores.backend is redis (NOTARY_REDIS_URL)');
  if (cfg.server.tls.cert_file !== undefined && cfg.server.tls.key_file === undefined) issue(['server', 'tls', 'key_file'], 'required with server.tls.cert_file');
  if (cfg.indexer.passage_min_words > cfg.indexer.passage_max_words) issue(['indexer', 'passage_min_words'], 'must not exceed passage_max_words');
}

/** The whole schema: the shared sections with every registered fragment in its place, then every rule. */
function buildConfigSchema(list: readonly ConfigFragment[]): z.ZodType<NotaryConfig, unknown> {
  const modeShape: Record<string, z.ZodType> = {};
  const indexerShape: Record<string, z.ZodType> = {};
  const topShape: Record<string, z.ZodType> = {};
  for (const fragment of list) {
    if (fragment.path.length === 3) modeShape[fragment.path[2]] = fragment.schema;
    else if (fragment.path.length === 2) indexerShape[fragment.path[1]] = fragment.schema;
    else topShape[fragment.path[0]] = fragment.schema;
  }
  const payments = paymentsSection.extend({ modes: z.object(modeShape).prefault({}) }).prefault({});
  const [defaultBackend, ...otherBackends] = backendNames;
  if (defaultBackend !== undefined) indexerShape['backend'] = z.enum([defaultBackend, ...otherBackends]).default(defaultBackend);
  const indexer = z.object({ ...sharedIndexerShape, ...indexerShape }).prefault({});
  return z
    .object({ ...sharedShape, payments, indexer, ...topShape })
    .superRefine((parsed, ctx) => {
      const cfg = parsed as unknown as NotaryConfig;
      const issue = (path: readonly (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path: [...path], message });
      sharedRules(cfg, issue);
      for (const fragment of list) {
        fragment.refine?.(configSection(cfg, fragment), cfg, (path, message) => issue([...fragment.path, ...path], message));
        fragment.rules?.(cfg, issue);
      }
      deploymentRules(cfg, issue);
    }) as unknown as z.ZodType<NotaryConfig, unknown>;
}

/** The schema of the shared sections and the registered plug-ins' (rebuilt when one registers). */
export function currentConfigSchema(): z.ZodType<NotaryConfig, unknown> {
  built ??= buildConfigSchema(fragments);
  return built;
}

/** `configSchema.parse(input)`: defaults applied and every rule checked, with the registered plug-ins' sections. */
export const configSchema = {
  parse: (input: unknown): NotaryConfig => currentConfigSchema().parse(input),
  safeParse: (input: unknown) => currentConfigSchema().safeParse(input),
};
