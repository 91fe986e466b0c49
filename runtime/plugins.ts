import '../payments/plugins.js'; // registers the plug-ins of payments/plugins.ts before any configuration is read

/** The registered plug-ins, for the parts of the service that loop over them (the command line among them). */
export { registeredPlugins, type NotaryPlugin, type PluginCliContext } from '../payments/plugin.js';
