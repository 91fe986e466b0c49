import { z } from 'zod';
import type { ConfigFragment } from '../../../core/index.js';

/** `payments.modes.api_key` (`Authorization: Bearer sk_live_...`): tenants pay from their credit balance. */
export const apiKeyModeSchema = z.object({ enabled: z.boolean().default(true) }).prefault({});

export type ApiKeySettings = z.infer<typeof apiKeyModeSchema>;

export const apiKeyConfigFragment: ConfigFragment<ApiKeySettings> = { path: ['payments', 'modes', 'api_key'], schema: apiKeyModeSchema };
