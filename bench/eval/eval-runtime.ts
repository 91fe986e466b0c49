import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema, type NotaryConfig } from '../../core/config.js';
import { Runtime, silentLog } from '../../runtime/index.js';

/** A runtime over a fresh data folder in tmp: the composition root as `notary serve` builds it, with these settings. */
export interface EvalRuntime {
  runtime: Runtime;
  /** Closes the runtime and deletes its data folder. */
  close(): Promise<void>;
}

export async function openEvalRuntime(name: string, settings: { indexer: NotaryConfig['indexer']; crawler?: Partial<NotaryConfig['crawler']> }): Promise<EvalRuntime> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `notary-eval-${name}-`));
  const base = configSchema.parse({ data_dir: dataDir, crawler: settings.crawler ?? {} });
  const config: NotaryConfig = { ...base, indexer: settings.indexer };
  try {
    const runtime = await Runtime.open(config, { log: silentLog });
    return {
      runtime,
      close: async () => {
        await runtime.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
