import { existsSync } from 'node:fs';
import path from 'node:path';
import type { NotaryConfig } from '../core/index.js';
import { NotaryError } from '../core/index.js';
import {
  activePins,
  describeModelFolder,
  describeProgress,
  failureMarkerFile,
  installPinnedFrom,
  pullPinnedModels,
  stderrLog,
  forgetDownloadFailure,
  installModelFolder,
  isCachedModelComplete,
  listCachedModels,
  makeInt8Copy,
  modelCacheDir,
  recentDownloadFailure,
  Runtime,
  assignmentLines,
  sha256File,
  silentLog,
  verifyModelFolder,
  type ModelFolder,
  type VerifyResult,
} from '../runtime/index.js';

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `notary models list`: the cache's model folders, the configured model, the live scorer and why. */
export async function modelsListCommand(cfg: NotaryConfig, opts: { json?: boolean }): Promise<void> {
  const cacheDir = modelCacheDir(cfg);
  const folders = listCachedModels(cacheDir);
  const pins = activePins();
  const failures = pins.map((p) => recentDownloadFailure(cacheDir, p.name)).filter((f) => f !== null);
  const failure = failures[0] ?? null;
  // Resolving the reranker as serve would tells which scorer is live (no download while a failure is remembered).
  const runtime = await Runtime.open(cfg, { log: silentLog });
  let live;
  let assignment;
  try {
    live = (await runtime.reranker()).info;
    assignment = (await runtime.scorers()).assignment;
  } finally {
    await runtime.close();
  }
  const configured = process.env['NOTARY_RERANKER_MODEL'] ?? cfg.reranker.model_dir ?? null;
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify({ cache_dir: cacheDir, models: folders, configured_model_dir: configured, embeddings_precision: cfg.embeddings.precision, download_failure: failure, live, assignment }, null, 2)}\n`,
    );
    return;
  }
  const lines = [`cache       ${cacheDir}`];
  if (folders.length === 0) lines.push('models      none in the cache');
  for (const f of folders) {
    const pin = pins.find((p) => p.name === f.name);
    const status = f.problem ? `BROKEN: ${f.problem}` : `${f.kind}, ${f.precision}, ${f.onnx_file}`;
    lines.push(`  ${f.name.padEnd(32)} ${mb(f.bytes).padStart(9)}  ${status}${pin ? ' (pinned: notary models verify checks its hashes)' : ''}`);
  }
  lines.push(`configured  ${configured ?? 'none (NOTARY_RERANKER_MODEL / reranker.model_dir)'}; embeddings.precision ${cfg.embeddings.precision}`);
  for (const f of failures) lines.push(`download    ${f.model} failed at ${f.failed_at} (${f.reason}); not tried again before ${f.retry_after} (${failureMarkerFile(cacheDir, f.model)})`);
  lines.push(`live        ${live.kind}: ${live.model}${live.why ? ` (${live.why})` : ''}`);
  lines.push(...assignmentLines(assignment));
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `notary models verify [name-or-dir]`: hashes against pins or reports, and a real load and score. Exit 1 on a problem. */
export async function modelsVerifyCommand(cfg: NotaryConfig, target: string | undefined, opts: { json?: boolean }): Promise<void> {
  const cacheDir = modelCacheDir(cfg);
  let folders: ModelFolder[];
  if (target) {
    const dir = existsSync(target) ? path.resolve(target) : path.join(cacheDir, target);
    if (!existsSync(dir)) throw new NotaryError('model_unavailable', `no model folder ${target} (neither a path nor a name in ${cacheDir})`);
    folders = [describeModelFolder(dir)];
  } else {
    folders = listCachedModels(cacheDir);
    const configured = process.env['NOTARY_RERANKER_MODEL'] ?? cfg.reranker.model_dir;
    if (configured && existsSync(configured)) folders.push(describeModelFolder(path.resolve(configured)));
  }
  const results: VerifyResult[] = [];
  for (const folder of folders) results.push(await verifyModelFolder(folder, cfg));
  if (opts.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else if (results.length === 0) process.stdout.write(`no models in ${cacheDir} and none configured\n`);
  else for (const r of results) process.stdout.write(`${r.ok ? 'OK  ' : 'FAIL'} ${r.name} (${r.dir})\n${r.checks.map((c) => `     ${c}`).join('\n')}\n`);
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

/**
 * `notary models install <dir> [--name N]`: checks that a local model folder loads, then copies it into the cache
 * (atomically). Installing the pinned model under its name makes it the live reranker; an int8 copy installed as
 * `<model>-int8` is what embeddings.precision int8 uses.
 */
export async function modelsInstallCommand(cfg: NotaryConfig, source: string, opts: { name?: string }): Promise<void> {
  const cacheDir = modelCacheDir(cfg);
  const from = path.resolve(source);
  if (!existsSync(from)) throw new NotaryError('model_unavailable', `${source} does not exist`);
  if (!opts.name && (await installPinned(cfg, from))) return;
  const folder = describeModelFolder(from);
  if (folder.problem) throw new NotaryError('model_unavailable', `${from} is not a model folder: ${folder.problem}`);
  const checked = await verifyModelFolder(folder, cfg);
  if (!checked.checks.some((c) => c.startsWith('loads in ONNX Runtime'))) {
    throw new NotaryError('model_unavailable', `${from} does not load: ${checked.checks.join('; ')}`);
  }
  const name = opts.name ?? folder.name;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new NotaryError('invalid_request', `--name "${name}" must be a plain folder name`);
  const target = await installModelFolder(from, cacheDir, name);
  forgetDownloadFailure(cacheDir, name);
  const lines = [`installed ${folder.kind} ${folder.precision} model ${name} into ${target} (${mb(folder.bytes)})`];
  const pin = activePins().find((p) => p.name === name);
  if (pin) {
    const complete = await isCachedModelComplete(cacheDir, pin);
    lines.push(complete ? `it matches the pinned ${pin.repo}: it is the reranker from now on` : `WARNING: its files do not match the pins of ${pin.repo}, so it will not be used as ${name}; name it otherwise and point NOTARY_RERANKER_MODEL at it`);
  } else if (name.endsWith('-int8')) {
    lines.push(`embeddings.precision int8 uses it for the model folder named ${name.slice(0, -'-int8'.length)}`);
  } else {
    lines.push(`use it: NOTARY_RERANKER_MODEL=${target} (or reranker.model_dir in the config)`);
  }
  for (const file of ['onnx/model.onnx', 'onnx/model_int8.onnx']) {
    if (existsSync(path.join(target, file))) lines.push(`  ${file} sha256 ${await sha256File(path.join(target, file))}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The pinned models in `from` (see installPinnedFrom), checked and installed; false when it holds none. Exit 1 when one differs. */
async function installPinned(cfg: NotaryConfig, from: string): Promise<boolean> {
  const results = await installPinnedFrom(cfg, from);
  if (!results) return false;
  const lines: string[] = [];
  for (const r of results) {
    if (r.installed) {
      lines.push(`installed ${r.model.kind} ${r.model.name} from ${r.from} into ${r.installed}: its ${r.model.files.length} files match the pins of ${r.model.repo}`);
    } else {
      lines.push(
        `NOT installed ${r.model.name} from ${r.from}: it differs from the pins of ${r.model.repo}: ${(r.differences ?? []).join('; ')}. ` +
          `A model of your own: notary models install ${r.from} --name <another-name>, then ${r.model.kind === 'bi-encoder' ? 'NOTARY_EMBEDDING_MODEL' : 'NOTARY_RERANKER_MODEL'}=<its folder>`,
      );
      process.exitCode = 1;
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return true;
}

/** `notary models pull [--to DIR]`: fetches the pinned models ahead of time, with progress on standard error. Exit 1 on a failure. */
export async function modelsPullCommand(cfg: NotaryConfig, opts: { to?: string }): Promise<void> {
  const results = await pullPinnedModels(cfg, {
    to: opts.to,
    log: (level, message) => {
      if (level === 'warn') stderrLog(level, message);
    },
    onProgress: (p) => process.stderr.write(`  ${describeProgress(p)}\n`),
  });
  const lines = results.map((r) =>
    r.outcome === 'failed'
      ? `FAILED  ${r.model.name} (${r.model.repo}@${r.model.revision}) from ${cfg.reranker.hub_url}: ${r.error ?? ''}`
      : `${r.outcome === 'fetched' ? 'fetched' : 'present'} ${r.model.name} (${r.model.kind}, ${r.model.repo}@${r.model.revision}) in ${r.dir}, sha256 of ${r.model.files.length} files match the pins`,
  );
  // embeddings.precision int8 embeds with the bi-encoder's int8 copy: made here, once, beside the pulled model (also
  // with --to: an image's model volume then has it), rather than at the first start.
  if (cfg.embeddings.precision === 'int8') {
    for (const r of results.filter((x) => x.outcome !== 'failed' && x.model.kind === 'bi-encoder')) {
      try {
        const made = await makeInt8Copy(r.dir, path.dirname(r.dir), { log: (_level, message) => process.stderr.write(`  ${message}\n`) });
        lines.push(`${made.made ? 'made   ' : 'present'} ${path.basename(made.dir)} (int8 copy of ${r.model.name} for embeddings.precision int8) in ${made.dir}`);
      } catch (err) {
        lines.push(`FAILED  int8 copy of ${r.model.name}: ${err instanceof Error ? err.message : String(err)}; searches embed with fp32 (slower). Fix: embeddings.precision fp32, or bash scripts/quantize-minilm.sh --src ${r.dir}`);
        process.exitCode = 1;
      }
    }
  }
  if (results.some((r) => r.outcome === 'failed')) {
    lines.push(`fix: reach ${cfg.reranker.hub_url} (or a mirror: reranker.hub_url / NOTARY_HUB_URL) and run notary models pull again (it resumes), or notary models install <dir> with a copy`);
    process.exitCode = 1;
  } else if (opts.to) {
    lines.push(`copy ${path.resolve(opts.to)} to the machine and run: notary models install <that folder>`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
