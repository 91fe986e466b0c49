import { Meilisearch } from 'meilisearch';

/** Drops the passage and page indexes a benchmark run made on a Meilisearch server. */
export async function dropMeilisearchIndexes(url: string, apiKey: string | null, index: string): Promise<void> {
  const client = new Meilisearch({ host: url, ...(apiKey ? { apiKey } : {}) });
  for (const uid of [index, `${index}__pages`]) await client.deleteIndexIfExists(uid);
}
