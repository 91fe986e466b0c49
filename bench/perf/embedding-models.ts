/** The bi-encoder folders the embedding phase measures (fp32, int8 and derived variants, made outside the repository) and the phase itself. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Runtime } from '../../runtime/index.js';
import type { BenchArgs } from './args.js';
import { embeddingVariants, measureEmbedding, type EmbeddingBench, type EmbeddingVariant } from './embedding.js';
import { passageModelText } from '../../indexer/index.js';
import { makeInt8Copy } from '../../reranker/index.js';
import { note } from './note.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const BI_ENCODER_NAME = 'all-MiniLM-L6-v2';

/**
 * The int8 copy of the shared bi-encoder: NOTARY_INT8_MODEL, else the one notary itself makes at first start
 * (reranker/int8-copy.ts, in TypeScript: what a user's install embeds with) in ~/.cache/notary/models/.
 */
export async function int8ModelDir(fp32Dir: string): Promise<string> {
  const named = process.env['NOTARY_INT8_MODEL'];
  if (named) return named;
  const made = await makeInt8Copy(fp32Dir, path.join(homedir(), '.cache', 'notary', 'models'), { log: (_level, line) => note(`embedding: ${line}`) });
  return made.dir;
}

/**
 * Model folders of the measured variants derived from the fp32 model (quantisation variants, offline fusion): made
 * once by scripts/quantize-minilm.sh into ~/.cache/notary/models/bench/ (NOTARY_BENCH_MODELS elsewhere), never into
 * the repository.
 */
export function derivedModelDirs(fp32Dir: string, variants: readonly EmbeddingVariant[]): Map<string, string> {
  const root = process.env['NOTARY_BENCH_MODELS'] ?? path.join(homedir(), '.cache', 'notary', 'models', 'bench');
  const dirs = new Map<string, string>();
  for (const { derived } of variants) {
    if (!derived || dirs.has(derived.tag)) continue;
    const dir = path.join(root, `${BI_ENCODER_NAME}-${derived.tag}`);
    if (!existsSync(path.join(dir, 'quantize-report.json'))) {
      note(`embedding: making ${dir} (scripts/quantize-minilm.sh ${derived.flags.join(' ')})`);
      const made = spawnSync('bash', [path.join(repoRoot, 'scripts', 'quantize-minilm.sh'), '--src', fp32Dir, '--out', dir, ...derived.flags], { stdio: 'inherit' });
      if (made.status !== 0) throw new Error(`scripts/quantize-minilm.sh ${derived.flags.join(' ')} failed (exit ${made.status})`);
    }
    dirs.set(derived.tag, dir);
  }
  return dirs;
}

export async function embeddingPhase(runtime: Runtime, sharedDir: string, args: BenchArgs): Promise<EmbeddingBench> {
  const fp32Dir = path.join(sharedDir, 'models', BI_ENCODER_NAME);
  const int8Dir = await int8ModelDir(fp32Dir);
  const rows = await runtime.storage.db.selectFrom('passages').select(['title', 'heading_path', 'text']).orderBy('id').execute();
  // Evenly spaced over the corpus, in index order (as the indexer meets them: runs of passages of one page).
  const step = Math.max(1, Math.floor(rows.length / args.embedPassages));
  const texts = rows
    .filter((_, i) => i % step === 0)
    .slice(0, args.embedPassages)
    .map((r) => passageModelText({ title: r.title, headingPath: r.heading_path, text: r.text }));
  const variants = embeddingVariants(args.embedSettings);
  note(`embedding: ${texts.length} passages x ${variants.length} settings, interleaved in rounds of ${args.embedRound} (fp32 ${fp32Dir}, int8 ${int8Dir})`);
  const derivedDirs = derivedModelDirs(fp32Dir, variants);
  return measureEmbedding({ fp32Dir, int8Dir, derivedDirs, texts, variants, roundSize: args.embedRound, log: note });
}

