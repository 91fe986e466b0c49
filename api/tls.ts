import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { SecureContextOptions } from 'node:tls';
import type { NotaryConfig } from '../core/index.js';
import { NotaryError } from '../core/index.js';

type TlsSettings = NotaryConfig['server']['tls'];

/** How often the certificate files are checked for a change (polling survives the rename a renewal tool does). */
export const CERT_POLL_MS = 2_000;

/** The PEM files of `server.tls`, or null when HTTPS is not configured. */
export function readCertificates(tls: TlsSettings): { cert: Buffer; key: Buffer } | null {
  if (!tls.cert_file || !tls.key_file) return null;
  try {
    return { cert: readFileSync(tls.cert_file), key: readFileSync(tls.key_file) };
  } catch (err) {
    throw new NotaryError(
      'invalid_config',
      `server.tls: cannot read the certificate or key (${(err as Error).message}); check server.tls.cert_file / key_file (NOTARY_TLS_CERT_FILE, NOTARY_TLS_KEY_FILE)`,
    );
  }
}

/** Modern settings for every HTTPS server notary runs: TLS 1.2 at least, the server's cipher order. */
export const TLS_HARDENING = { minVersion: 'TLSv1.2', honorCipherOrder: true } as const;

interface SecureServer {
  setSecureContext(options: SecureContextOptions): void;
}

/**
 * Renewed certificates are taken without a restart: when either file changes, both are read again and the server's
 * secure context is replaced (new connections get the new certificate; open ones keep theirs). A pair that does not
 * load (half-written, mismatched) is reported and the previous one kept.
 */
export function reloadCertificatesOnChange(app: FastifyInstance, tls: TlsSettings, log: (level: 'info' | 'warn', message: string) => void): void {
  const files = [tls.cert_file, tls.key_file].filter((f): f is string => f !== undefined);
  if (files.length !== 2) return;
  const server = app.server as unknown as SecureServer;
  if (typeof server.setSecureContext !== 'function') return;
  const onChange = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size) return;
    try {
      const pair = readCertificates(tls);
      if (!pair) return;
      server.setSecureContext({ ...pair, ...TLS_HARDENING });
      log('info', `server.tls: certificate reloaded from ${tls.cert_file}`);
    } catch (err) {
      log('warn', `server.tls: the changed certificate could not be loaded, keeping the previous one: ${(err as Error).message}`);
    }
  };
  for (const file of files) watchFile(file, { interval: CERT_POLL_MS, persistent: false }, onChange);
  app.addHook('onClose', async () => {
    for (const file of files) unwatchFile(file, onChange);
  });
}
