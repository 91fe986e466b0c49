import type { ConfigInput } from '../../core/config.js';
import { createDatabase, startPostgres, type TestPostgres } from '../../testkit/postgres.js';

export interface StorageBackend {
  name: string;
  /** The `storage` config of a fresh store: SQLite in the data folder, or a new database on the PostgreSQL server. */
  storage: () => Promise<ConfigInput['storage']>;
}

/**
 * SQLite and PostgreSQL for suites that run the whole service on both: a throwaway PostgreSQL cluster is started on
 * first use and every call gets a database of its own (named `<prefix>_<pid>_<n>`). Call `stop` in afterAll.
 */
export function storageBackends(prefix: string): { backends: StorageBackend[]; stop(): void } {
  let server: TestPostgres | undefined;
  let databases = 0;
  return {
    backends: [
      { name: 'SQLite', storage: async () => ({ driver: 'sqlite' }) },
      {
        name: 'PostgreSQL',
        storage: async () => {
          server ??= await startPostgres();
          return { driver: 'postgres', postgres_url: await createDatabase(server.url, `${prefix}_${process.pid}_${databases++}`) };
        },
      },
    ],
    stop: () => server?.stop(),
  };
}
