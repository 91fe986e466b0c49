/**
 * PostgreSQL beside another index backend in one bench run (`--with-postgres`, issue 34's three backends): the
 * PostgreSQL backend keeps its pages in PostgreSQL storage (indexer.backend postgres needs it), so the corpus is
 * crawled and indexed again into a database of its own on the server, with the backend's shipped settings. The serve
 * phase then measures it beside the run's backend and the FTS5 baseline on the same queries.
 */
import path from 'node:path';
import { loadConfig, type NotaryConfig } from '../../core/config.js';
import { Runtime } from '../../runtime/index.js';
import { createDatabase, dropDatabase } from '../../testkit/postgres.js';
import { crawlPhase, indexPhase, type CrawlPhase, type IndexPhase } from './corpus-phases.js';

/** Another backend served beside the run's own, over storage of its own. */
export interface Companion {
  backend: string;
  /** Its config: storage, index backend and data folder; the serve phase adds the model and its settings. */
  config: NotaryConfig;
}

export interface PostgresCompanion extends Companion {
  crawl: CrawlPhase;
  index: IndexPhase;
  /** Drops the database (unless the run keeps its data). */
  drop(): Promise<void>;
}

export async function postgresCompanion(options: {
  serverUrl: string;
  /** The database's name on the server (made here, dropped by drop()). */
  name: string;
  dataDir: string;
  docsDir: string;
  concurrency: number;
  note: (message: string) => void;
}): Promise<PostgresCompanion> {
  const { serverUrl, name, note } = options;
  const url = await createDatabase(serverUrl, name);
  const drop = () => dropDatabase(serverUrl, name);
  try {
    const config = loadConfig({
      env: {},
      overrides: {
        data_dir: path.join(options.dataDir, 'postgres'),
        embeddings: { model: 'off' },
        indexer: { backend: 'postgres' },
        storage: { driver: 'postgres', postgres_url: url },
      },
    });
    const runtime = await Runtime.open(config, { env: {}, log: (level, message) => (level === 'warn' ? note(`postgres warning: ${message}`) : undefined) });
    try {
      note('postgres (beside the run): the corpus crawled and indexed again into PostgreSQL storage');
      const crawl = await crawlPhase(runtime, options.docsDir, options.concurrency);
      const index = await indexPhase(runtime);
      note(`postgres: ${crawl.pages_stored} pages, ${index.passages} passages (${index.passages_per_s} passages/s)`);
      return { backend: 'postgres', config, crawl, index, drop };
    } finally {
      await runtime.close();
    }
  } catch (err) {
    await drop().catch(() => undefined);
    throw err;
  }
}
