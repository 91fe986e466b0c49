import type { Sessions, Users } from '../../accounts/index.js';
import type { NotaryConfig } from '../../core/index.js';
import type { SearchIndex } from '../../indexer/index.js';
import type { Accounts, Catalog, PluginServices } from '../../payments/index.js';
import type {
  CollectionStore,
  CrawlJobStore,
  CrawlRunStore,
  CrawlSeedStore,
  PageStore,
  UsageRepository,
} from '../../storage/index.js';

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
  crawlJobs: CrawlJobStore;
  runs: CrawlRunStore;
  pages: PageStore;
  index: SearchIndex;
}
