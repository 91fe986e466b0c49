import path from 'node:path';
import { z } from 'zod';
import type { ConfigFragment } from '../../core/index.js';

/** `receipts`: signed receipts (X-Notary-Sign: required) and the receipt log. */
export const receiptsSchema = z
  .object({
    /** `issuer` of every signed receipt: the service's public base URL. Default http://<server.host>:<server.port>. */
    issuer: z.string().min(1).optional(),
    /** A keyring file to sign with instead of <data_dir>/receipt-keys.json (which is created at first start); it must exist. */
    key_file: z.string().min(1).optional(),
    /** Origin line (and note key name) of the log's checkpoints; default: the issuer without its scheme, + "/receipt-log". */
    log_origin: z
      .string()
      .regex(/^[^\s+]+$/, 'must be non-empty without spaces or "+"')
      .optional(),
    /** A new checkpoint is signed at most this often while the log grows; 0 signs one whenever it has grown. */
    checkpoint_interval_s: z.number().int().min(0).default(0),
  })
  .prefault({});

export type ReceiptsConfig = z.infer<typeof receiptsSchema>;

export const receiptsConfigFragment: ConfigFragment<ReceiptsConfig> = {
  path: ['receipts'],
  schema: receiptsSchema,
  env: [
    { env: 'NOTARY_RECEIPTS_ISSUER', path: ['receipts', 'issuer'], kind: 'string' },
    { env: 'NOTARY_RECEIPTS_KEY_FILE', path: ['receipts', 'key_file'], kind: 'string' },
  ],
  resolve(section) {
    if (section.key_file) section.key_file = path.resolve(section.key_file);
  },
};
