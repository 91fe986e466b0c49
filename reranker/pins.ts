import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { NotaryError } from '../core/index.js';
import { PINNED_MODELS, type PinnedModel } from './models.js';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');
const pinsSchema = z
  .array(
    z.object({
      name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a plain folder name'),
      kind: z.enum(['cross-encoder', 'bi-encoder']),
      repo: z.string().min(1),
      revision: z.string().min(1),
      onnxFile: z.string().min(1),
      files: z.array(z.object({ path: z.string().regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[\w./-]+$/, 'a relative path inside the model folder'), sha256: hex64, bytes: z.number().int().nonnegative().optional() })).min(1),
    }),
  )
  .min(1);

/**
 * The pins in force: PINNED_MODELS, or the JSON file NOTARY_MODEL_PINS names (an array of pinned models, same shape;
 * tests and organisations that re-export the models pin their own files this way). A bad file is invalid_config.
 */
export function activePins(env: Record<string, string | undefined> = process.env): readonly PinnedModel[] {
  const file = env['NOTARY_MODEL_PINS'];
  if (!file) return PINNED_MODELS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new NotaryError('invalid_config', `NOTARY_MODEL_PINS=${file} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const result = pinsSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new NotaryError('invalid_config', `NOTARY_MODEL_PINS=${file}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'not a list of pinned models'}`);
  }
  return result.data;
}
