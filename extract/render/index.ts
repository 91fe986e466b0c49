export { BrowserRenderer, guardRequests } from './browser.js';
export type { RenderOptions, RenderedPage } from './browser.js';
