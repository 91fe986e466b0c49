import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { envBindings, parseEnvValue, setPath, type EnvBinding } from './config/env.js';
import { configFragments, configSection, currentConfigSchema, type ConfigInput, type NotaryConfig } from './config/schema.js';
import { NotaryError } from './errors.js';

/**
 * The configuration: the shared sections live in core/config/, each plug-in's section (a payment mode's, an
 * extension's) in the plug-in's folder as a `ConfigFragment` its registration adds. This file reads and merges the
 * sources and validates them once.
 */
export { DECIMAL_PATTERN, FEATURES, pricingSchema, TIER_NAME, tierSchema, type Feature } from './config/pricing.js';
export { envBindings, type EnvBinding } from './config/env.js';
export {
  configFragments,
  configSchema,
  configSection,
  registerConfigFragments,
  type ConfigFragment,
  type ConfigInput,
  type ConfigIssue,
  type NotaryConfig,
} from './config/schema.js';

type Env = Record<string, string | undefined>;

/** Every environment variable that maps onto a config path: the shared ones and the registered plug-ins'. */
export function allEnvBindings(): readonly EnvBinding[] {
  return [...envBindings, ...configFragments().flatMap((fragment) => fragment.env ?? [])];
}

/** Objects merged key by key, `over` winning; arrays and other values replaced whole. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    if (value && typeof value === 'object' && !Array.isArray(value) && prev && typeof prev === 'object' && !Array.isArray(prev)) {
      out[key] = deepMerge(prev as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      out[key] = value;
    }
  }
  return out;
}

export interface LoadConfigOptions {
  env?: Env;
  /** Where deprecation warnings go; default: standard error. */
  warn?: (message: string) => void;
  /** Explicit config file; otherwise NOTARY_CONFIG, otherwise <data_dir>/notary.json when it exists. */
  file?: string;
  /** Highest-precedence values, e.g. from CLI flags. */
  overrides?: ConfigInput;
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`).join('\n');
}

/**
 * Reads defaults < config file < environment < overrides, validates once, and resolves paths against the
 * working directory. Throws NotaryError('invalid_config') with every problem listed.
 */
export function loadConfig(options: LoadConfigOptions = {}): NotaryConfig {
  const env = options.env ?? process.env;
  const fromEnv: Record<string, unknown> = {};
  for (const binding of allEnvBindings()) {
    const raw = env[binding.env];
    if (raw !== undefined) setPath(fromEnv, binding.path, parseEnvValue(binding.env, raw, binding.kind));
  }
  const overrides = (options.overrides ?? {}) as Record<string, unknown>;
  const dataDir = (overrides['data_dir'] as string | undefined) ?? (fromEnv['data_dir'] as string | undefined) ?? './data';
  const explicitFile = options.file ?? env['NOTARY_CONFIG'];
  const file = explicitFile ?? path.join(dataDir, 'notary.json');
  let fromFile: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('top level must be an object');
      fromFile = parsed as Record<string, unknown>;
    } catch (err) {
      throw new NotaryError('invalid_config', `config file ${file}: ${(err as Error).message}`);
    }
  } else if (explicitFile) {
    throw new NotaryError('invalid_config', `config file ${explicitFile} does not exist`);
  }
  const merged = deepMerge(deepMerge(fromFile, fromEnv), overrides);
  const warn = options.warn ?? ((message: string) => process.stderr.write(`WARNING: ${message}\n`));
  moveFormerKeys(merged, warn);
  const result = currentConfigSchema().safeParse(merged);
  if (!result.success) {
    throw new NotaryError('invalid_config', `invalid configuration:\n${formatIssues(result.error)}`);
  }
  const cfg = result.data;
  applyDeprecatedKeys(cfg, merged, warn);
  cfg.data_dir = path.resolve(cfg.data_dir);
  if (cfg.reranker.model_dir) cfg.reranker.model_dir = path.resolve(cfg.reranker.model_dir);
  cfg.reranker.cache_dir = path.resolve(cfg.reranker.cache_dir ?? path.join(cfg.data_dir, 'models'));
  for (const fragment of configFragments()) fragment.resolve?.(configSection(cfg, fragment), cfg);
  return cfg;
}

function hasPath(input: Record<string, unknown>, keys: readonly string[]): boolean {
  let node: unknown = input;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== undefined;
}

/** Keys of earlier releases that are still read: each is copied to its new place unless that is set too. */
const DEPRECATED_KEYS: ReadonlyArray<{ from: readonly string[]; to: readonly string[] }> = [
  { from: ['search', 'credits_by_depth'], to: ['pricing', 'search', 'credits_by_depth'] },
  { from: ['extract', 'credits'], to: ['pricing', 'extract', 'credits'] },
  { from: ['extract', 'credits_rendered'], to: ['pricing', 'extract', 'credits_rendered'] },
];

/** Plug-ins' keys read at their earlier places (`ConfigFragment.formerly`), moved to the new ones before validation. */
function moveFormerKeys(input: Record<string, unknown>, warn: (message: string) => void): void {
  for (const fragment of configFragments()) {
    for (const [key, from] of Object.entries(fragment.formerly ?? {})) {
      if (!hasPath(input, from)) continue;
      const to = [...fragment.path, key];
      // Copied along the way: the objects may be the caller's (overrides) or shared with the file's.
      let parent = input;
      for (const k of from.slice(0, -1)) parent = parent[k] = { ...(parent[k] as Record<string, unknown>) };
      const last = from[from.length - 1] ?? '';
      const value = parent[last];
      delete parent[last];
      if (hasPath(input, to)) {
        warn(`config key ${from.join('.')} is deprecated and ignored: ${to.join('.')} is set`);
        continue;
      }
      warn(`config key ${from.join('.')} is deprecated: use ${to.join('.')} (read this time)`);
      setPath(input, to, value);
    }
  }
}

function applyDeprecatedKeys(cfg: NotaryConfig, input: Record<string, unknown>, warn: (message: string) => void): void {
  const target = cfg as unknown as Record<string, unknown>;
  for (const { from, to } of DEPRECATED_KEYS) {
    if (!hasPath(input, from)) continue;
    if (hasPath(input, to)) {
      warn(`config key ${from.join('.')} is deprecated and ignored: ${to.join('.')} is set`);
      continue;
    }
    warn(`config key ${from.join('.')} is deprecated: use ${to.join('.')} (read this time)`);
    const value = from.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], target);
    setPath(target, [...to], value);
  }
}

/** Processes `notary serve` answers requests with (server.workers; 0 = one per core). */
export function serveWorkers(cfg: NotaryConfig): number {
  return cfg.server.workers > 0 ? cfg.server.workers : availableParallelism();
}

/**
 * How a model runs: `workers` worker threads (0 = the calling thread) of `threads` ONNX Runtime intra-op threads each.
 * Unset, this machine's cores shared by `processes` (1..4) become worker threads of one intra-op thread each: on
 * these CPUs two single-threaded int8 sessions side by side embedded 1.21x as many passages as one session with two
 * threads (docs/dense-retrieval.md, Embedding speed), and the event loop stays free while the model runs.
 */
export function modelRunners(reranker: NotaryConfig['reranker'], processes = 1): { workers: number; threads: number } {
  const share = Math.min(4, Math.max(1, Math.floor(availableParallelism() / Math.max(1, processes))));
  const workers = reranker.workers ?? share;
  return { workers, threads: reranker.threads ?? (workers > 0 ? 1 : share) };
}
