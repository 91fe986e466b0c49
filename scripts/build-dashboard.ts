// Builds the web dashboard into dashboard/dist (what `notary serve` builds in memory at start), to check that it
// builds and to look at the files: `npm run build:dashboard`.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DASHBOARD_SOURCE, buildDashboardAssets } from '../api/dashboard/assets.js';

const out = path.join(DASHBOARD_SOURCE, 'dist');
const started = performance.now();
const assets = await buildDashboardAssets();
await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, 'assets'), { recursive: true });
await writeFile(path.join(out, 'index.html'), assets.index.body);
for (const [name, file] of assets.files) await writeFile(path.join(out, 'assets', name), file.body);
const sizes = [...assets.files].map(([name, file]) => `${name} ${(file.body.length / 1024).toFixed(1)} KiB`).join(', ');
process.stdout.write(`dashboard built in ${(performance.now() - started).toFixed(0)} ms: ${sizes} -> ${path.relative(process.cwd(), out)}\n`);
