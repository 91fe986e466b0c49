export { BrowserRenderer, CHROMIUM_ARGS } from './browser.js';
export type { RenderOptions, RenderedPage } from './browser.js';
