import '../payments/plugins.js'; // registers the plug-ins of payments/plugins.ts before any configuration is read
import '../indexer/backends/plugins.js'; // registers the index backends of indexer/backends/plugins.ts
import '../indexer/vector-stores.js'; // registers the vector stores of indexer/vector-stores.ts

/** The registered plug-ins, for the parts of the service that loop over them (the command line among them). */
export { registeredPlugins, type NotaryPlugin, type PluginCliContext } from '../payments/plugin.js';
export { registeredIndexBackends, type IndexBackendPlugin } from '../indexer/backend-plugin.js';
