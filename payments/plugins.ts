import { apiKeyPlugin } from './modes/api-key/index.js';
import { mppPlugin } from './modes/mpp/index.js';
import { x402Plugin } from './modes/x402/index.js';
import { registerPlugins } from './plugin.js';
import { receiptsPlugin } from './receipts/index.js';

/**
 * The registered plug-ins: one line each. The order is the payment modes' order (their challenges in a 401/402, the
 * modes named by ambiguous_credentials) and the order of their error codes in the registry and the OpenAPI document.
 * Importing this module registers them.
 */
export const PLUGINS = registerPlugins([
  apiKeyPlugin,
  receiptsPlugin,
  mppPlugin,
  x402Plugin,
]);
