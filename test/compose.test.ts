import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { allEnvBindings, loadConfig } from '../core/config.js';
import '../runtime/plugins.js'; // the plug-ins' and index backends' environment variables
import { repoRoot } from '../testkit/components.js';

/**
 * docker-compose.yml and the Dockerfile, checked for structure (there is no Docker on these machines; the same
 * topology runs natively in test/scaled-topology.test.ts): the services and their images, health checks, start
 * order, volumes, TLS, and every NOTARY_* variable known to the config schema and accepted by it.
 */

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; timeout?: string; retries?: number };
}

const compose = parse(readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const notaryServices = ['api-1', 'api-2', 'crawler'];

/** What compose makes of `${NAME:?message}` (a required secret: a stand-in here) and `${NAME:-default}` (unset: the default). */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::([?-])([^}]*))?\}/g, (_, name: string, kind: string | undefined, rest: string) =>
    kind === '-' ? rest : `stand-in-${name.toLowerCase()}`,
  );
}

function environmentOf(name: string): Record<string, string> {
  const env = services[name]?.environment ?? {};
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v))]));
}

describe('docker-compose.yml', () => {
  it('has two API nodes, a crawler worker, PostgreSQL with pgvector, Redis and Meilisearch from official images', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'crawler', 'meilisearch', 'postgres', 'redis']);
    expect(services['postgres']?.image).toMatch(/^pgvector\/pgvector:[\w.]+-pg15$/);
    expect(services['redis']?.image).toMatch(/^redis:7[\w.-]*$/);
    expect(services['meilisearch']?.image).toMatch(/^getmeili\/meilisearch:v1\.\d+/);
    for (const name of notaryServices) expect(services[name]?.build, name).toBe('.');
    expect(services['api-1']?.command?.[0]).toBe('serve');
    expect(services['api-1']?.command).toContain('--no-crawl');
    expect(services['api-2']?.command).toEqual(services['api-1']?.command);
    expect(services['crawler']?.command).toEqual(['crawl-worker']);
  });

  it('health-checks every service, and the notary services start after their dependencies are healthy', () => {
    for (const [name, service] of Object.entries(services)) {
      expect(service.healthcheck?.test?.length, `${name} has a health check`).toBeGreaterThan(1);
      expect(service.healthcheck?.interval, name).toMatch(/^\d+s$/);
    }
    expect(services['api-1']?.healthcheck?.test.join(' ')).toContain('/readyz');
    expect(services['postgres']?.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(services['redis']?.healthcheck?.test.join(' ')).toContain('ping');
    expect(services['meilisearch']?.healthcheck?.test.join(' ')).toContain('/health');
    for (const name of notaryServices) {
      expect(services[name]?.depends_on, name).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        meilisearch: { condition: 'service_healthy' },
      });
    }
  });

  it('keeps data in named volumes declared at the top level, one per stateful service and node', () => {
    const named = (service: string) => (services[service]?.volumes ?? []).map((v) => v.split(':')[0] ?? '').filter((v) => !v.startsWith('.'));
    for (const [service, target] of [['postgres', '/var/lib/postgresql/data'], ['redis', '/data'], ['meilisearch', '/meili_data']] as const) {
      expect(services[service]?.volumes?.some((v) => v.endsWith(`:${target}`)), service).toBe(true);
    }
    const used = new Set(Object.keys(services).flatMap(named));
    expect(new Set(Object.keys(compose.volumes))).toEqual(used);
    // The API nodes sign receipts with one key (shared volume); each has its own data folder.
    expect(named('api-1')).toContain('receipt-keys');
    expect(named('api-2')).toContain('receipt-keys');
    expect(named('api-1').filter((v) => v !== 'receipt-keys')).not.toEqual(named('api-2').filter((v) => v !== 'receipt-keys'));
    // The models are fetched once into one volume every notary service shares.
    for (const name of notaryServices) {
      expect(services[name]?.volumes, name).toContain('models:/models');
      expect(environmentOf(name)['NOTARY_MODEL_CACHE_DIR'], name).toBe('/models');
      expect(environmentOf(name)['NOTARY_MODEL_DOWNLOAD'], name).toBe('true');
    }
  });

  it('serves TLS on the API nodes from a read-only certificate mount', () => {
    for (const name of ['api-1', 'api-2']) {
      const env = environmentOf(name);
      expect(env['NOTARY_TLS_CERT_FILE'], name).toMatch(/^\/tls\//);
      expect(env['NOTARY_TLS_KEY_FILE'], name).toMatch(/^\/tls\//);
      expect(services[name]?.volumes, name).toContain('./tls:/tls:ro');
      expect(services[name]?.healthcheck?.test.join(' '), name).toContain('https://');
    }
  });

  it('sets only NOTARY_* variables the config schema binds, and the result validates with the scaled-out backends', () => {
    const bound = new Set(allEnvBindings().map((b) => b.env));
    for (const name of notaryServices) {
      const env = environmentOf(name);
      for (const key of Object.keys(env)) {
        // NOTARY_CONFIG names a file and NOTARY_DATA_DIR the data folder: both read by loadConfig itself.
        if (key === 'NOTARY_CONFIG') continue;
        expect(bound.has(key), `${name}: ${key} is not in core/config.ts envBindings`).toBe(true);
      }
      const config = loadConfig({ env: { ...env, NOTARY_DATABASE_URL: 'postgres://notary:x@postgres:5432/notary', NOTARY_MEILISEARCH_URL: 'http://meilisearch:7700', NOTARY_REDIS_URL: 'redis://redis:6379' } });
      expect(config.storage.driver, name).toBe('postgres');
      expect(config.indexer.backend, name).toBe('meilisearch');
      expect(config.stores.backend, name).toBe('redis');
      expect(config.crawler.shared_frontier, name).toBe(true);
    }
    // Every value compose passes is of the form the schema reads (a stand-in only where compose substitutes).
    expect(environmentOf('api-1')['NOTARY_STORAGE']).toBe('postgres');
  });

  it('gives the API nodes the search-only Meilisearch key and the crawler the key that writes', () => {
    expect(String(services['api-1']?.environment?.['NOTARY_MEILISEARCH_API_KEY'])).toContain('NOTARY_MEILISEARCH_SEARCH_KEY');
    expect(String(services['crawler']?.environment?.['NOTARY_MEILISEARCH_API_KEY'])).toContain('MEILI_MASTER_KEY');
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
  // The Node the project runs on (scripts/node-env.sh installs it where the system's is older).
  const nodeVersion = readFileSync(path.join(repoRoot, '.node-version'), 'utf8').trim();

  it('builds on the Node version of .node-version, installs from the lock file, runs as a non-root user', () => {
    const from = /^FROM node:(\d+)/m.exec(dockerfile);
    expect(Number(from?.[1])).toBe(Number(nodeVersion.split('.')[0]));
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).toMatch(/chromium/);
    expect(dockerfile).toMatch(/^USER (?!root)\w+/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "bin\/notary\.js"\]/m);
    expect(existsSync(path.join(repoRoot, 'bin/notary.js'))).toBe(true);
  });

  it('keeps local state and secrets out of the build context', () => {
    const ignore = readFileSync(path.join(repoRoot, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', '.git', 'data', 'tls', '.env']) expect(ignore).toContain(entry);
  });
});
