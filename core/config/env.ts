import { NotaryError } from '../errors.js';

export interface EnvBinding {
  env: string;
  path: readonly string[];
  kind: 'string' | 'int' | 'bool' | 'list';
}

/** The shared sections' variables; a plug-in's are in its config fragment (`allEnvBindings` lists both). */
export const envBindings: readonly EnvBinding[] = [
  { env: 'NOTARY_DATA_DIR', path: ['data_dir'], kind: 'string' },
  { env: 'NOTARY_LOG_LEVEL', path: ['log_level'], kind: 'string' },
  { env: 'NOTARY_HOST', path: ['server', 'host'], kind: 'string' },
  { env: 'NOTARY_PORT', path: ['server', 'port'], kind: 'int' },
  { env: 'NOTARY_SERVER_WORKERS', path: ['server', 'workers'], kind: 'int' },
  { env: 'NOTARY_CRAWL_ON_START', path: ['server', 'crawl_on_start'], kind: 'bool' },
  { env: 'NOTARY_START_WAIT_MS', path: ['server', 'start_wait_ms'], kind: 'int' },
  { env: 'NOTARY_STORAGE', path: ['storage', 'driver'], kind: 'string' },
  { env: 'NOTARY_DATABASE_URL', path: ['storage', 'postgres_url'], kind: 'string' },
  { env: 'NOTARY_SEEDS', path: ['crawler', 'seeds'], kind: 'list' },
  { env: 'NOTARY_USER_AGENT', path: ['crawler', 'user_agent'], kind: 'string' },
  { env: 'NOTARY_CONTACT_URL', path: ['crawler', 'contact_url'], kind: 'string' },
  { env: 'NOTARY_CRAWL_DELAY_MS', path: ['crawler', 'per_host_delay_ms'], kind: 'int' },
  { env: 'NOTARY_CRAWL_SHARED_FRONTIER', path: ['crawler', 'shared_frontier'], kind: 'bool' },
  { env: 'NOTARY_CRAWL_LEASE_SECONDS', path: ['crawler', 'lease_seconds'], kind: 'int' },
  { env: 'NOTARY_ALLOW_PRIVATE_NETWORKS', path: ['extract', 'allow_private_networks'], kind: 'bool' },
  { env: 'NOTARY_ALLOWED_PRIVATE_RANGES', path: ['extract', 'allowed_private_ranges'], kind: 'list' },
  { env: 'NOTARY_EXTRACT_RESPECT_ROBOTS', path: ['extract', 'respect_robots_txt'], kind: 'bool' },
  { env: 'NOTARY_EXTRACT_MAX_BYTES', path: ['extract', 'max_bytes'], kind: 'int' },
  { env: 'NOTARY_EXTRACT_TIMEOUT_MS', path: ['extract', 'total_timeout_ms'], kind: 'int' },
  { env: 'NOTARY_EXTRACT_CACHE_TTL_S', path: ['extract', 'cache_ttl_s'], kind: 'int' },
  { env: 'NOTARY_EXTRACT_RENDER', path: ['extract', 'render'], kind: 'string' },
  { env: 'NOTARY_WEBHOOKS_ALLOW_PRIVATE_NETWORKS', path: ['webhooks', 'allow_private_networks'], kind: 'bool' },
  { env: 'NOTARY_WEBHOOKS_TIMEOUT_MS', path: ['webhooks', 'timeout_ms'], kind: 'int' },
  { env: 'NOTARY_WEBHOOKS_MAX_ATTEMPTS', path: ['webhooks', 'max_attempts'], kind: 'int' },
  { env: 'NOTARY_WEBHOOKS_DELIVER_EVERY_MS', path: ['webhooks', 'deliver_every_ms'], kind: 'int' },
  { env: 'NOTARY_MAP_SITEMAP_TIMEOUT_MS', path: ['map', 'sitemap_timeout_ms'], kind: 'int' },
  { env: 'NOTARY_MAP_MAX_SITEMAP_URLS', path: ['map', 'max_sitemap_urls'], kind: 'int' },
  { env: 'NOTARY_RERANKER_MODEL', path: ['reranker', 'model_dir'], kind: 'string' },
  { env: 'NOTARY_MODEL_CACHE_DIR', path: ['reranker', 'cache_dir'], kind: 'string' },
  { env: 'NOTARY_MODEL_DOWNLOAD', path: ['reranker', 'download'], kind: 'bool' },
  { env: 'NOTARY_MODEL_WORKERS', path: ['reranker', 'workers'], kind: 'int' },
  { env: 'NOTARY_HUB_URL', path: ['reranker', 'hub_url'], kind: 'string' },
  { env: 'NOTARY_RERANK_TOP_N', path: ['search', 'rerank_top_n'], kind: 'int' },
  { env: 'NOTARY_CROSS_ENCODER_FROM_DEPTH', path: ['search', 'cross_encoder_from_depth'], kind: 'int' },
  { env: 'NOTARY_DEFAULT_LANGUAGE', path: ['search', 'default_language'], kind: 'string' },
  { env: 'NOTARY_INCLUDE_NAVIGATION_PAGES', path: ['search', 'include_navigation_pages'], kind: 'bool' },
  { env: 'NOTARY_EMBEDDING_MODEL', path: ['embeddings', 'model'], kind: 'string' },
  { env: 'NOTARY_EMBEDDING_PRECISION', path: ['embeddings', 'precision'], kind: 'string' },
  { env: 'NOTARY_EMBEDDING_ANN_ABOVE', path: ['embeddings', 'ann_above'], kind: 'int' },
  { env: 'NOTARY_EMBEDDING_ANN_PERSIST', path: ['embeddings', 'ann_persist'], kind: 'bool' },
  { env: 'NOTARY_QUERY_REWRITER_URL', path: ['search', 'query_rewriter', 'url'], kind: 'string' },
  { env: 'NOTARY_QUERY_REWRITER_MODEL', path: ['search', 'query_rewriter', 'model'], kind: 'string' },
  { env: 'NOTARY_QUERY_REWRITER_API_KEY', path: ['search', 'query_rewriter', 'api_key'], kind: 'string' },
  { env: 'NOTARY_DASHBOARD_SIGNUP', path: ['dashboard', 'signup'], kind: 'string' },
  { env: 'NOTARY_DASHBOARD_SIGNUP_CREDITS', path: ['dashboard', 'signup_credits'], kind: 'int' },
  { env: 'NOTARY_DASHBOARD_SIGNUPS_PER_ADDRESS', path: ['dashboard', 'signup_limit', 'max_per_address'], kind: 'int' },
  { env: 'NOTARY_SECURE_COOKIES', path: ['dashboard', 'secure_cookies'], kind: 'string' },
  { env: 'NOTARY_INDEX_BACKEND', path: ['indexer', 'backend'], kind: 'string' },
  { env: 'NOTARY_STORES', path: ['stores', 'backend'], kind: 'string' },
  { env: 'NOTARY_REDIS_URL', path: ['stores', 'redis_url'], kind: 'string' },
  { env: 'NOTARY_TLS_CERT_FILE', path: ['server', 'tls', 'cert_file'], kind: 'string' },
  { env: 'NOTARY_TLS_KEY_FILE', path: ['server', 'tls', 'key_file'], kind: 'string' },
  { env: 'NOTARY_TRUSTED_PROXIES', path: ['server', 'trusted_proxies'], kind: 'list' },
  { env: 'NOTARY_METRICS_TOKEN', path: ['server', 'metrics_token'], kind: 'string' },
];

export function setPath(target: Record<string, unknown>, keys: readonly string[], value: unknown): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (last !== undefined) node[last] = value;
}

export function parseEnvValue(name: string, raw: string, kind: 'string' | 'int' | 'bool' | 'list'): unknown {
  switch (kind) {
    case 'string':
      return raw;
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) throw new NotaryError('invalid_config', `${name} must be an integer, got "${raw}"`);
      return Number(raw);
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
      throw new NotaryError('invalid_config', `${name} must be true or false, got "${raw}"`);
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  }
}

