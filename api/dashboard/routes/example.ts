import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from '../deps.js';
import { requireUser } from '../session.js';

/** Where a page title names its site: "VACUUM | Handbook", "Install — Docs". The page's own name comes first. */
const SITE_SEPARATOR = /\s+[|—–·:]\s+|\s+-\s+/;

/**
 * The query of the dashboard's Quick start example: the name of a page that is in this server's index, so the first
 * call a newcomer copies finds something. Null while nothing is indexed.
 */
export function exampleQuery(titles: readonly string[]): string | null {
  const names = titles.map((title) => (title.split(SITE_SEPARATOR)[0] ?? '').replace(/\s+/g, ' ').trim()).filter((name) => name.length > 0);
  const words = (name: string) => name.split(' ').length;
  const chosen = names.find((name) => words(name) >= 2 && words(name) <= 8 && name.length <= 80) ?? names.find((name) => name.length <= 80) ?? null;
  return chosen;
}

/**
 * GET /example-query: for any signed-in dashboard account (members and operators), never public: the titles are
 * this operator's index, which only holders of a key search.
 */
export async function exampleRoutes(app: FastifyInstance, { deps }: { deps: DashboardDeps }): Promise<void> {
  app.get('/example-query', async (request) => {
    requireUser(request);
    return { query: exampleQuery(await deps.pages.indexedTitles(50)) };
  });
}
