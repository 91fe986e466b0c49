/**
 * Calibrated rerank_score (issue 29 item 3). The fused score of a result list (retrieval evidence scaled to the list's
 * best, mixed with the model's score) orders a list well but says nothing across queries: the best hit of any query
 * scores high. A model's calibration maps it, per query and monotonically, onto a level anchored in absolute evidence
 * of the list's best result (the model's own score of it and the share of the query's words it holds), so that
 * CALIBRATED_THRESHOLD separates answers from results of a query the index cannot answer. Order within a list never
 * changes: one query's scores all go through one increasing function of the fused score.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { stem, words, NotaryError } from '../core/index.js';
import type { Reranker } from '../reranker/index.js';
import { sha256File } from '../reranker/index.js';
import { queryStems } from './reflect.js';

/** A calibrated rerank_score at or above this says "this answers the query"; below it, "probably not". */
export const CALIBRATED_THRESHOLD = 0.5;

/**
 * The three fitted numbers of one model. A result's logit: modelWeight * (the model's score of the list's best result
 * - the fused gap from the best down to the result) + coverageWeight * the best's word coverage + bias. A gap in the
 * fused score counts as the same drop in the model's score, so within a list the logit falls with the fused score.
 */
export interface CalibrationParameters {
  /** > 0: a higher model score means more likely an answer, and a result below the best scores lower. */
  modelWeight: number;
  coverageWeight: number;
  bias: number;
}

/** What a list's calibration is anchored on: absolute evidence about its best result. */
export interface ListEvidence {
  /** The model's own 0..1 score of the best result's passage (before any fusion or scaling). */
  model: number;
  /** Share of the query's content words (stems) in the best result's title, headings and text, 0..1. */
  coverage: number;
}

/** The evidence of a list: its best result's model score and word coverage. */
export function listEvidence(query: string, best: { model: number; title: string; headingPath?: string | null | undefined; text: string }): ListEvidence {
  return { model: best.model, coverage: coverage(query, `${best.title} ${best.headingPath ?? ''} ${best.text}`) };
}

/** Share of the query's content-word stems found in `text` (0 for a query without words). */
export function coverage(query: string, text: string): number {
  const wanted = queryStems(query);
  if (wanted.size === 0) return 0;
  // Stops at the word that completes the set (the best result's whole text was stemmed into a set every search).
  const found = new Set<string>();
  for (const word of words(text)) {
    const s = stem(word);
    if (!wanted.has(s) || found.has(s)) continue;
    found.add(s);
    if (found.size === wanted.size) break;
  }
  return found.size / wanted.size;
}

/** The logit of a result of fused score `fused` in a list whose best has fused score `bestFused` and evidence `evidence`. */
export function calibratedLogit(params: CalibrationParameters, evidence: ListEvidence, bestFused: number, fused: number): number {
  return params.modelWeight * (evidence.model - (bestFused - fused)) + params.coverageWeight * evidence.coverage + params.bias;
}

function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/**
 * The calibrated scores of one list, in its order: sigmoid of calibratedLogit. Strictly increasing in the fused score
 * (modelWeight > 0), so the order is the fused order; always within 0..1. Without parameters the fused scores come back.
 */
export function calibrateList(params: CalibrationParameters | null, evidence: ListEvidence | null, fused: readonly number[]): number[] {
  if (!params || !evidence || fused.length === 0) return [...fused];
  const best = Math.max(...fused);
  return fused.map((f) => sigmoid(calibratedLogit(params, evidence, best, f)));
}

const parametersSchema = z.object({
  modelWeight: z.number().positive().finite(),
  coverageWeight: z.number().finite(),
  bias: z.number().finite(),
});

const entrySchema = z.object({
  /** The model folder's name ("all-MiniLM-L6-v2"); its quantised copy ("...-int8") shares it unless fitted itself. */
  model: z.string().min(1),
  kind: z.enum(['bi-encoder', 'cross-encoder']),
  /** sha256 of the .onnx file fitted. */
  onnx_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  parameters: parametersSchema,
  /** How it was fitted: command, date, splits, report file. */
  fitted: z.record(z.string(), z.unknown()).optional(),
});

export type CalibrationEntry = z.infer<typeof entrySchema>;

const fileSchema = z.object({ calibrations: z.array(entrySchema) });

const BUILT_IN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'calibrations.json');

/** The calibrations of a file (search/calibrations.json or the operator's NOTARY_CALIBRATION_FILE); a bad file is invalid_config. */
export function readCalibrations(file: string): CalibrationEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new NotaryError('invalid_config', `calibration file ${file} cannot be read (NOTARY_CALIBRATION_FILE): ${err instanceof Error ? err.message : String(err)}`);
  }
  const result = fileSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new NotaryError('invalid_config', `calibration file ${file} (NOTARY_CALIBRATION_FILE): ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'not {"calibrations": [...]}'}`);
  }
  return result.data.calibrations;
}

/** The calibrations in force: NOTARY_CALIBRATION_FILE's entries first (an operator's own fits), then the built-in ones. */
export function activeCalibrations(env: Record<string, string | undefined> = process.env): CalibrationEntry[] {
  const own = env['NOTARY_CALIBRATION_FILE'];
  return [...(own ? readCalibrations(own) : []), ...readCalibrations(BUILT_IN)];
}

/** A model folder's name from its .onnx path (<name>/onnx/model.onnx or <name>/model.onnx), "-int8" dropped. */
export function modelFolderName(onnxPath: string): string {
  const parent = path.dirname(onnxPath);
  const folder = path.basename(parent) === 'onnx' ? path.basename(path.dirname(parent)) : path.basename(parent);
  return folder.replace(/-int8$/, '');
}

/** The entry for a model: by its .onnx file's sha256, else by its folder name and kind; null when none (identity). */
export function findCalibration(entries: readonly CalibrationEntry[], model: { kind: string; onnxSha256: string; name: string }): CalibrationEntry | null {
  return (
    entries.find((e) => e.onnx_sha256 === model.onnxSha256) ??
    entries.find((e) => e.kind === model.kind && e.model === model.name) ??
    null
  );
}

/** A scorer backed by an .onnx file (OnnxReranker); other scorers (the lexical fallback) have no calibration. */
function onnxPathOf(model: Reranker): string | null {
  const candidate = (model as Partial<{ onnxPath: unknown }>).onnxPath;
  return typeof candidate === 'string' ? candidate : null;
}

/** sha256 of each .onnx file hashed in this process (a model file is not replaced under a running server). */
const digests = new Map<string, Promise<string>>();

/** The calibration of a scorer: its entry's parameters, or null (rerank_score stays the fused score). */
export async function calibrationFor(model: Reranker, entries: readonly CalibrationEntry[] = activeCalibrations()): Promise<CalibrationParameters | null> {
  const onnxPath = onnxPathOf(model);
  if (!onnxPath || model.info.kind === 'lexical') return null;
  let digest = digests.get(onnxPath);
  if (!digest) {
    digest = sha256File(onnxPath);
    digests.set(onnxPath, digest);
    digest.catch(() => digests.delete(onnxPath));
  }
  const entry = findCalibration(entries, { kind: model.info.kind, onnxSha256: await digest, name: modelFolderName(onnxPath) });
  return entry?.parameters ?? null;
}
