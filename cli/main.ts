import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, type ConfigInput, type NotaryConfig } from '../core/config.js';
import { isNotaryError } from '../core/errors.js';

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return Number(value);
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
    .action(async (opts: { port?: number; host?: string; crawl: boolean }) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        server: {
          ...(opts.port !== undefined ? { port: opts.port } : {}),
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
    .option('--max-pages <n>', 'stop after this many pages', positiveInt)
    .option('--max-depth <n>', 'follow links at most this many hops from a seed', (v) => Number(v))
    .option('--delay-ms <ms>', 'delay between requests to one host (0 = politeness off)', (v) => Number(v))
    .option('--concurrency <n>', 'requests in flight at once', positiveInt)
    .action(async (seeds: string[], opts: { maxPages?: number; maxDepth?: number; delayMs?: number; concurrency?: number }) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        crawler: {
          ...(seeds.length > 0 ? { seeds } : {}),
          ...(opts.maxPages !== undefined ? { max_pages: opts.maxPages } : {}),
          ...(opts.maxDepth !== undefined ? { max_depth: opts.maxDepth } : {}),
          ...(opts.delayMs !== undefined ? { per_host_delay_ms: opts.delayMs } : {}),
          ...(opts.concurrency !== undefined
            ? { max_concurrency: opts.concurrency, per_host_concurrency: opts.concurrency }
            : {}),
        },
      });
      const { crawlCommand } = await import('./crawl.js');
      await crawlCommand(cfg);
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
    .action(async (opts: { tenant: string; credits?: number; tier?: string; name?: string }) => {
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

  const receipts = program.command('receipts').description('signed receipts: keys, offline verification, log audit');
  receipts
    .command('rotate-key')
    .description('make a new current signing key; the old one is retired and keeps verifying the receipts it signed')
    .action(async () => {
      const { rotateKeyCommand } = await import('./receipts.js');
      await rotateKeyCommand(configFrom(program.opts<GlobalOptions>()));
    });
  receipts
    .command('verify')
    .description('verify a saved response (or receipt) offline: signature, kid, key validity at issued_at, response digest')
    .argument('<saved-response.json>')
    .option('--jwks <file-or-url>', 'the published key set to trust (default: <issuer>/.well-known/jwks.json)')
    .option('--request <file>', 'the exact request body that was sent, to check request_digest')
    .action(async (file: string, opts: { jwks?: string; request?: string }) => {
      const { verifyCommand } = await import('./receipts.js');
      await verifyCommand(configFrom(program.opts<GlobalOptions>()), file, opts);
    });
  receipts
    .command('audit')
    .description('offline audit from saved files: checkpoint signatures, consistency between checkpoints, inclusion of receipts')
    .argument('[files...]', 'checkpoints, JWKS, saved responses or receipts, inclusion and consistency proofs')
    .option('--jwks <file-or-url>', 'the published key set to trust')
    .option('--origin <origin>', 'the log origin to expect (default: the first checkpoint\'s)')
    .option('--local', "also re-hash this server's own log from its database")
    .action(async (files: string[], opts: { jwks?: string; origin?: string; local?: boolean }) => {
      const { auditCommand } = await import('./receipts.js');
      await auditCommand(configFrom(program.opts<GlobalOptions>()), files, opts);
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
    .option('--mode <mode>', 'excerpt, text, markdown or html', 'markdown')
    .option('--query <text>', 'with --mode excerpt: pick the passages that best answer it')
    .option('--render <policy>', 'auto (browser only for JS shells), never or always')
    .option('--max-age <s>', 'accept a cached copy at most this old', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
      return Number(v);
    })
    .option('--json', 'print the whole result as JSON')
    .action(async (target: string, opts: { mode: string; query?: string; render?: string; maxAge?: number; json?: boolean }) => {
      const { extractCommand } = await import('./extract.js');
      await extractCommand(configFrom(program.opts<GlobalOptions>()), target, opts);
    });

  program
    .command('status')
    .description('pages, passages, index size, last crawl and the active reranker')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { statusCommand } = await import('./status.js');
      await statusCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

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
  }
}
