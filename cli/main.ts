import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, type ConfigInput, type NotaryConfig, isNotaryError } from '../core/index.js';
import { registeredIndexBackends, registeredPlugins } from '../runtime/plugins.js';
import { MCP_PAYMENT_HELP } from '../mcp/paying.js';
import { addPaymentBooksCommands, pluginCliContext } from './payment-commands.js';

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return Number(value);
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

interface CrawlFlags {
  maxPages?: number;
  maxDepth?: number;
  scope?: 'path' | 'host' | 'domain' | 'any';
  include?: string[];
  exclude?: string[];
  resume?: boolean;
  delayMs?: number;
  concurrency?: number;
  collection?: string;
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return `${manifest.version ?? 'unknown'} (node ${process.versions.node})`;
}

interface GlobalOptions {
  data?: string;
  config?: string;
}

function configFrom(global: GlobalOptions, overrides: ConfigInput = {}): NotaryConfig {
  return loadConfig({
    ...(global.config ? { file: global.config } : {}),
    overrides: { ...overrides, ...(global.data ? { data_dir: global.data } : {}) },
  });
}

export function buildProgram(): Command {
  const program = new Command();
  const configOf = (overrides: ConfigInput = {}) => configFrom(program.opts<GlobalOptions>(), overrides);
  const pluginContext = pluginCliContext(configOf);
  program
    .name('notary')
    .description('Self-hosted web search and page-extraction API: crawl, index, rerank, serve.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--data <dir>', 'data folder holding all state (default ./data, or NOTARY_DATA_DIR)')
    .option('--config <file>', 'JSON config file (default <data>/notary.json, or NOTARY_CONFIG)')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: false });

  program
    .command('serve')
    .description('run the HTTP API, plus a background crawl worker for the configured seeds')
    .option('--port <port>', 'port to listen on (default 8080, or NOTARY_PORT)', port)
    .option('--host <host>', 'address to bind (default 127.0.0.1, or NOTARY_HOST)')
    .option('--no-crawl', 'do not run the background crawl worker')
    .option('--workers <n>', 'API processes sharing the port; 0 = one per core (default 1, or NOTARY_SERVER_WORKERS)', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('a whole number: API processes, 0 for one per core');
      return Number(v);
    })
    .action(async (opts: { port?: number; host?: string; crawl: boolean; workers?: number }) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        server: {
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.crawl ? {} : { crawl_on_start: false }),
        },
      });
      const { serveCommand } = await import('./serve.js');
      await serveCommand(cfg);
    });

  program
    .command('crawl')
    .description('crawl the given seeds (or the configured ones) and index what was fetched, with live progress')
    .argument('[seeds...]', 'seed URLs')
    .option('--max-pages <n>', 'stop when this many pages are stored (duplicates, failures and skips do not count)', positiveInt)
    .option('--max-depth <n>', 'follow links at most this many hops from a seed', (v) => Number(v))
    .addOption(
      new Option('--scope <scope>', 'how far from the seeds: path (under the seed folder), host, domain or any (default path)').choices([
        'path',
        'host',
        'domain',
        'any',
      ]),
    )
    .option('--include <regex>', 'crawl only URLs matching one of these patterns (repeatable)', collect)
    .option('--exclude <regex>', 'never crawl URLs matching this pattern (repeatable)', collect)
    .option('--resume', 'continue the latest stopped or interrupted crawl (of these seeds, when given) where it stopped')
    .option('--delay-ms <ms>', 'delay between requests to one host (0 = politeness off)', (v) => Number(v))
    .option('--concurrency <n>', 'requests in flight at once', positiveInt)
    .option('--collection <name>', 'put the crawled pages in this collection (made when new; default: the collection "default")')
    .action(async (seeds: string[], opts: CrawlFlags) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        crawler: {
          ...(seeds.length > 0 ? { seeds } : {}),
          ...(opts.scope ? { scope: opts.scope } : {}),
          ...(opts.include ? { include: opts.include } : {}),
          ...(opts.exclude ? { exclude: opts.exclude } : {}),
          ...(opts.maxPages !== undefined ? { max_pages: opts.maxPages } : {}),
          ...(opts.maxDepth !== undefined ? { max_depth: opts.maxDepth } : {}),
          ...(opts.delayMs !== undefined ? { per_host_delay_ms: opts.delayMs } : {}),
          ...(opts.concurrency !== undefined
            ? { max_concurrency: opts.concurrency, per_host_concurrency: opts.concurrency }
            : {}),
        },
      });
      const { crawlCommand } = await import('./crawl.js');
      await crawlCommand(cfg, {
        resume: opts.resume === true,
        seedsGiven: seeds.length > 0,
        maxPagesGiven: opts.maxPages !== undefined,
        ...(opts.collection !== undefined ? { collection: opts.collection } : {}),
      });
    });

  const keys = program.command('keys').description('manage tenants and API keys');
  keys
    .command('create')
    .description('create an API key (and the tenant if new); the key is printed once, alone on the last line')
    .requiredOption('--tenant <name>', 'tenant name')
    .option('--credits <n>', 'credits granted to a new tenant, or added to an existing one', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
      return Number(v);
    })
    .option('--tier <tier>', 'rate-limit tier of a new tenant')
    .option('--name <label>', 'a label for the key')
    .option('--collections <names>', 'limit the key to these collections (comma-separated; default: every collection)')
    .action(async (opts: { tenant: string; credits?: number; tier?: string; name?: string; collections?: string }) => {
      const { keysCreateCommand } = await import('./keys.js');
      await keysCreateCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  keys
    .command('revoke')
    .description('revoke an API key by id (key_...)')
    .argument('<key-id>')
    .action(async (keyId: string) => {
      const { keysRevokeCommand } = await import('./keys.js');
      await keysRevokeCommand(configFrom(program.opts<GlobalOptions>()), keyId);
    });
  keys
    .command('list')
    .description('list API keys (never the secret)')
    .option('--tenant <name>', 'only this tenant')
    .option('--json', 'machine-readable output')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const { keysListCommand } = await import('./keys.js');
      await keysListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  keys
    .command('private-networks')
    .description("let a tenant's crawl jobs reach private addresses (its intranet), or not: the others keep the deployment's policy")
    .requiredOption('--tenant <name>', 'tenant name')
    .argument('<on|off>')
    .action(async (value: string, opts: { tenant: string }) => {
      const { keysPrivateNetworksCommand } = await import('./keys.js');
      await keysPrivateNetworksCommand(configFrom(program.opts<GlobalOptions>()), opts.tenant, value);
    });

  const collections = program.command('collections').description('collections: named sets of pages, searched apart (issue 33)');
  collections
    .command('list')
    .description('list the collections and how many pages each holds')
    .action(async () => {
      const { collectionsListCommand } = await import('./collections.js');
      await collectionsListCommand(configFrom(program.opts<GlobalOptions>()));
    });
  collections
    .command('create')
    .description('create an empty collection (notary crawl --collection makes one too); private unless --public')
    .argument('<name>')
    .option('--public', 'payers without an account may read it')
    .action(async (name: string, opts: { public?: boolean }) => {
      const { collectionsCreateCommand } = await import('./collections.js');
      await collectionsCreateCommand(configFrom(program.opts<GlobalOptions>()), name, opts.public === true);
    });
  collections
    .command('set')
    .description("change a collection: public or private, its own search prices and maximum depth")
    .argument('<name>')
    .option('--public', 'payers without an account may read it')
    .option('--private', 'only keys (and party keys) may read it')
    .option('--prices <credits>', 'its own credits per search depth from depth 1, comma-separated (e.g. 1,2,4), or "default" for the price list\'s')
    .option('--max-depth <n>', 'the deepest search of it (at most search.max_depth), or "default"')
    .action(async (name: string, opts: { public?: boolean; private?: boolean; prices?: string; maxDepth?: string }) => {
      const { collectionsSetCommand } = await import('./collections.js');
      await collectionsSetCommand(configFrom(program.opts<GlobalOptions>()), name, opts);
    });

  collections
    .command('tenant')
    .description("limit a tenant to some collections: every key it has or makes, and its party keys, read only those ('all' lifts it)")
    .argument('<tenant>')
    .argument('<collections>', 'comma-separated names, or all')
    .action(async (tenant: string, list: string) => {
      const { collectionsTenantCommand } = await import('./collections.js');
      await collectionsTenantCommand(configFrom(program.opts<GlobalOptions>()), tenant, list);
    });

  const admin = program.command('admin').description('dashboard accounts: operators');
  admin
    .command('create')
    .description('create an operator account (reads the password from standard input, or asks for it at a terminal)')
    .requiredOption('--email <email>', "the operator's email, used to sign in")
    .action(async (opts: { email: string }) => {
      const { adminCreateCommand } = await import('./admin.js');
      await adminCreateCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  admin
    .command('list')
    .description('list dashboard users (operators and members)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { adminListCommand } = await import('./admin.js');
      await adminListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  program
    .command('search')
    .description('search the local index from the terminal')
    .argument('<query>')
    .option('--depth <n>', 'search depth', positiveInt, 1)
    .option('--json', 'print the JSON the API would return (without billing fields)')
    .action(async (query: string, opts: { depth: number; json?: boolean }) => {
      const { searchCommand } = await import('./search.js');
      await searchCommand(configFrom(program.opts<GlobalOptions>()), query, opts);
    });

  program
    .command('extract')
    .description('main content of a URL or a local HTML file, as the API would return it')
    .argument('<url-or-file>')
    .option('--mode <mode>', 'excerpt (default, as in the API), text, markdown or html', 'excerpt')
    .option('--query <text>', 'with --mode excerpt: pick the passages that best answer it')
    .option('--render <policy>', 'auto (browser only for JS shells), never or always')
    .option('--max-age <s>', 'accept a cached copy at most this old', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
      return Number(v);
    })
    .option('--include-comments', 'keep the reader comments after the article')
    .option('--json', 'print the whole result as JSON')
    .action(async (target: string, opts: { mode: string; query?: string; render?: string; maxAge?: number; includeComments?: boolean; json?: boolean }) => {
      const { extractCommand } = await import('./extract.js');
      await extractCommand(configFrom(program.opts<GlobalOptions>()), target, opts);
    });

  const models = program.command('models').description('list, verify, install and pull reranker and embedding models');
  models
    .command('list')
    .description('models in the cache, the configured one, and which scorer is live and why')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { modelsListCommand } = await import('./models.js');
      await modelsListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  models
    .command('verify')
    .description('check model files against their pinned or reported sha256 and load each in ONNX Runtime (exit 1 on a problem)')
    .argument('[name-or-dir]', 'a model folder, or a name in the cache (default: every cached and configured model)')
    .option('--json', 'machine-readable output')
    .action(async (target: string | undefined, opts: { json?: boolean }) => {
      const { modelsVerifyCommand } = await import('./models.js');
      await modelsVerifyCommand(configFrom(program.opts<GlobalOptions>()), target, opts);
    });
  models
    .command('pull')
    .description('fetch the pinned models (the bi-encoder and the cross-encoder) from reranker.hub_url now, resuming a cut transfer, each file checked against its sha256 (image builds, air-gapped copies)')
    .option('--to <dir>', 'write them into this folder instead of the model cache (then `notary models install <dir>` elsewhere)')
    .action(async (opts: { to?: string }) => {
      const { modelsPullCommand } = await import('./models.js');
      await modelsPullCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  models
    .command('install')
    .description('install the pinned models a folder holds (<dir>/<name>/ as `models pull --to` writes, checked against the pins; what differs is reported), or copy one local model folder into the cache after checking it loads')
    .argument('<dir>')
    .option('--name <name>', 'folder name in the cache (default: the folder\'s own name; the pinned cross-encoder is ms-marco-MiniLM-L-6-v2)')
    .action(async (dir: string, opts: { name?: string }) => {
      const { modelsInstallCommand } = await import('./models.js');
      await modelsInstallCommand(configFrom(program.opts<GlobalOptions>()), dir, opts);
    });

  program
    .command('crawl-worker')
    .description('crawl the configured seeds now and again every crawler.recrawl_after_hours, indexing as it goes (a scaled-out crawler process, no HTTP API)')
    .action(async () => {
      const { crawlWorkerCommand } = await import('./serve.js');
      await crawlWorkerCommand(configFrom(program.opts<GlobalOptions>()));
    });

  const index = program.command('index').description('the search index backend (indexer.backend)');
  index
    .command('rebuild')
    .description('rebuild the whole index from the stored passages; searches see the old index until the new one is complete')
    .action(async () => {
      const { indexRebuildCommand } = await import('./index-admin.js');
      await indexRebuildCommand(configFrom(program.opts<GlobalOptions>()));
    });
  // Each index backend adds its own commands under `notary index`.
  for (const backend of registeredIndexBackends()) backend.cli?.(index, pluginContext);

  program
    .command('mcp')
    .description('an MCP server for agents (notary_search, notary_extract) calling a notary API over HTTP; stdio by default')
    .option('--url <url>', 'the notary API to call (default NOTARY_URL, else http://127.0.0.1:8080)')
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .option('--host <host>', 'with --http: address to bind', '127.0.0.1')
    .option('--port <port>', 'with --http: port (default 8090)', port, 8090)
    .option('--path <path>', 'with --http: endpoint path', '/mcp')
    .option('--sign', 'ask for a signed receipt on every call (X-Notary-Sign: required)')
    .option('--timeout-ms <ms>', 'per-attempt timeout of API calls', positiveInt)
    .addHelpText('after', MCP_PAYMENT_HELP)
    .action(async (opts: { url?: string; http?: boolean; host: string; port: number; path: string; sign?: boolean; timeoutMs?: number }) => {
      const { mcpCommand } = await import('./mcp.js');
      await mcpCommand(opts);
    });

  program
    .command('status')
    .description('pages, passages, index size, last crawl and the active reranker')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { statusCommand } = await import('./status.js');
      await statusCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  addPaymentBooksCommands(program, configOf);
  for (const plugin of registeredPlugins()) plugin.cli?.(program, pluginContext);

  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (isNotaryError(err)) {
      process.stderr.write(`notary: ${err.message} [${err.code}]\n`);
    } else {
      process.stderr.write(`notary: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    process.exitCode = 1;
    // A command that failed ends, even when something it opened (a model's worker thread, a pool) would keep the
    // process alive: a half-started server must not linger without serving.
    setTimeout(() => process.exit(1), 2_000).unref();
  }
}
