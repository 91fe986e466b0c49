import type { Sessions, Users } from '../../accounts/index.js';
import type { NotaryConfig } from '../../core/config.js';
import type { SearchIndex } from '../../indexer/search-index.js';
import type { Accounts } from '../../payments/accounts.js';
import type { Catalog } from '../../payments/catalog.js';
import type { PluginServices } from '../../payments/plugin.js';
import type { CollectionStore } from '../../storage/collections.js';
import type { CrawlRunStore } from '../../storage/crawl-runs.js';
import type { CrawlSeedStore } from '../../storage/crawl-seeds.js';
import type { PageStore } from '../../storage/pages.js';
import type { UsageRepository } from '../../storage/usage.js';

/** What the dashboard's JSON endpoints work with; the composition root (a Runtime) has all of it. */
export interface DashboardDeps {
  config: NotaryConfig;
  users: Users;
  sessions: Sessions;
  accounts: Accounts;
  catalog: Catalog;
  usage: UsageRepository;
  /** The registered plug-ins' services (e.g. the party keys `notary parties` manages). */
  service: PluginServices;
  seeds: CrawlSeedStore;
  collections: CollectionStore;
  runs: CrawlRunStore;
  pages: PageStore;
  index: SearchIndex;
}
