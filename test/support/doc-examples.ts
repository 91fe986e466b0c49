import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../testkit/cli.js';

/**
 * The code blocks of README.md and docs/*.md with the marker that says how a test covers each one.
 * A marker is an HTML comment on the line right above the fence (invisible when the page is rendered):
 *   <!-- example: run id=first-search -->            run by test/docs-examples.test.ts in a real world
 *   <!-- example: response id=first-search -->       the JSON answer of block first-search: its fields must exist
 *   <!-- example: covered-by=test/x.test.ts id=x --> another test reads this block with docExample('x')
 *   <!-- example: flags -->                          a long measurement: its programs and flags must exist
 */
export interface DocBlock {
  file: string;
  line: number;
  lang: string;
  code: string;
  marker: DocMarker | undefined;
}

export interface DocMarker {
  kind: 'run' | 'response' | 'covered-by' | 'flags';
  id?: string;
  target?: string;
  attrs: Record<string, string>;
}

/** Languages whose blocks are commands or programs: each needs a marker. Others (json, text) are shown output. */
export const COMMAND_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'ts', 'typescript', 'js', 'python', 'go', 'http']);

/** Generated from a real run by a script; its blocks are that run's commands and output. */
export const GENERATED_DOCS = new Map([['docs/sdk-examples.md', 'scripts/sdk-examples.ts']]);

export function docFiles(): string[] {
  const docs = readdirSync(path.join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

export function parseMarker(comment: string): DocMarker | undefined {
  const match = /^<!--\s*example:\s*(.*?)\s*-->$/.exec(comment.trim());
  if (!match) return undefined;
  const words = (match[1] ?? '').split(/\s+/).filter((w) => w !== '');
  const attrs: Record<string, string> = {};
  let kind: DocMarker['kind'] | undefined;
  let target: string | undefined;
  for (const word of words) {
    const eq = word.indexOf('=');
    const key = eq === -1 ? word : word.slice(0, eq);
    const value = eq === -1 ? '' : word.slice(eq + 1);
    if (key === 'run' || key === 'response' || key === 'flags') kind = key;
    else if (key === 'covered-by') {
      kind = key;
      target = value;
    } else attrs[key] = value;
  }
  if (!kind) return undefined;
  const marker: DocMarker = { kind, attrs };
  if (attrs['id'] !== undefined) marker.id = attrs['id'];
  if (target !== undefined) marker.target = target;
  return marker;
}

export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(path.join(repoRoot, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').startsWith('```'); i++) body.push(lines[i] ?? '');
    blocks.push({ file, line: start + 1, lang: open[1] ?? '', code: body.join('\n') + '\n', marker: parseMarker(lines[start - 1] ?? '') });
  }
  return blocks;
}

export function allDocBlocks(): DocBlock[] {
  return docFiles().flatMap(docBlocks);
}

/** The block a marker names with `id=`: for tests that run a documented example themselves. */
export function docExample(id: string): DocBlock {
  const found = allDocBlocks().filter((block) => block.marker?.id === id && block.marker.kind !== 'response');
  if (found.length !== 1) throw new Error(`docs: expected exactly one example with id=${id}, found ${found.length}`);
  return found[0] as DocBlock;
}

/** The command lines of a shell block: continuation lines joined, trailing comments and shown output (`# …`) dropped. */
export function commandLines(code: string): string[] {
  return code
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** `# Name: value` lines after a command: the headers its answer must carry. */
export function shownHeaders(code: string): string[] {
  return [...code.matchAll(/^# ([A-Za-z][A-Za-z0-9-]*): /gm)].map((m) => m[1] ?? '').filter((h) => h !== '');
}
