import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** One file of the built dashboard. */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface DashboardAssets {
  /** The single page every /dashboard/ path answers with. */
  index: Asset;
  /** Hashed file names under /dashboard/assets/. */
  files: ReadonlyMap<string, Asset>;
}

/** The dashboard's sources (dashboard/ at the repository root). */
export const DASHBOARD_SOURCE = fileURLToPath(new URL('../../dashboard/', import.meta.url));

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

function asset(body: Buffer | string, type: string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return { body: bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` };
}

/**
 * Builds the dashboard (TypeScript + Preact, one stylesheet) with esbuild, in memory: no network, no files written,
 * about a tenth of a second. `notary serve` builds it at start; `npm run build:dashboard` writes the same files to
 * dashboard/dist for inspection.
 */
export async function buildDashboardAssets(source: string = DASHBOARD_SOURCE): Promise<DashboardAssets> {
  const result = await build({
    entryPoints: [path.join(source, 'src/main.tsx')],
    bundle: true,
    minify: true,
    sourcemap: false,
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: '/assets',
    entryNames: '[name]-[hash]',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const files = new Map<string, Asset>();
  let script = '';
  let style = '';
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    const ext = path.extname(name);
    files.set(name, asset(Buffer.from(file.contents), TYPES[ext] ?? 'application/octet-stream'));
    if (ext === '.js') script = name;
    if (ext === '.css') style = name;
  }
  if (!script || !style) throw new Error('the dashboard build produced no script or no stylesheet');
  const template = await readFile(path.join(source, 'index.html'), 'utf8');
  const html = template.replace('%APP_JS%', `/dashboard/assets/${script}`).replace('%APP_CSS%', `/dashboard/assets/${style}`);
  return { index: asset(html, 'text/html; charset=utf-8'), files };
}

let cached: Promise<DashboardAssets> | undefined;

/** The dashboard built once per process. */
export function dashboardAssets(): Promise<DashboardAssets> {
  cached ??= buildDashboardAssets().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
