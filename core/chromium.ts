/**
 * Flags for Debian's Chromium, shared by the crawler's browser engine and the extraction renderer. Without the
 * background-networking flags Chromium keeps dialling Google's hosts, which a closed network refuses many at a time.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
