import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NotaryConfig } from '../core/index.js';
import { NotaryError } from '../core/index.js';
import {
  OUTPUT_MODES,
  RENDER_POLICIES,
  extractLocalFile,
  extractUrl,
  type ExtractResult,
  type OutputMode,
  type RenderPolicy,
} from '../extract/index.js';
import { Runtime } from '../runtime/index.js';

export interface ExtractCommandOptions {
  mode: string;
  query?: string;
  render?: string;
  maxAge?: number;
  includeComments?: boolean;
  json?: boolean;
}

const MAX_LOCAL_FILE_BYTES = 50 * 1024 * 1024;

export async function extractCommand(cfg: NotaryConfig, target: string, opts: ExtractCommandOptions): Promise<void> {
  if (!OUTPUT_MODES.includes(opts.mode as OutputMode)) {
    throw new NotaryError('invalid_request', `--mode must be one of ${OUTPUT_MODES.join(', ')}`);
  }
  if (opts.render !== undefined && !RENDER_POLICIES.includes(opts.render as RenderPolicy)) {
    throw new NotaryError('invalid_request', `--render must be one of ${RENDER_POLICIES.join(', ')}`);
  }
  const mode = opts.mode as OutputMode;
  const runtime = await Runtime.open(cfg);
  // The reranker loads only when an excerpt is chosen against a query.
  const scorePassages = runtime.extract().scorePassages;
  let result: ExtractResult;
  try {
    if (/^https?:\/\//i.test(target)) {
      result = await extractUrl(
        {
          url: target,
          mode,
          ...(opts.query ? { query: opts.query } : {}),
          ...(opts.render ? { render: opts.render as RenderPolicy } : {}),
          ...(opts.maxAge !== undefined ? { max_age: opts.maxAge } : {}),
          ...(opts.includeComments ? { include_comments: true } : {}),
        },
        runtime.extract(),
      );
    } else {
      const file = path.resolve(target);
      if (!existsSync(file) || !statSync(file).isFile()) {
        throw new NotaryError('invalid_url', `"${target}" is neither an http(s) URL nor a readable file`);
      }
      if (statSync(file).size > MAX_LOCAL_FILE_BYTES) throw new NotaryError('page_too_large', `${file} is larger than 50 MB`);
      // The bytes are decoded like a response: byte-order mark, <meta charset>, UTF-8 if valid, else windows-1252.
      result = await extractLocalFile(readFileSync(file), pathToFileURL(file).href, mode, {
        ...(opts.query ? { query: opts.query } : {}),
        ...(scorePassages ? { scorePassages } : {}),
        ...(opts.includeComments ? { includeComments: true } : {}),
      });
    }
  } finally {
    await runtime.close();
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  process.stderr.write(
    `${result.title ?? '(no title)'} — ${result.final_url}${result.status ? ` (HTTP ${result.status})` : ''}; ` +
      `${result.word_count} words${result.rendered ? ', rendered in Chromium' : ''}\n`,
  );
  process.stdout.write(`${result.content}\n`);
}
