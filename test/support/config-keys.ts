import type { z } from 'zod';
import { currentConfigSchema } from '../../core/config/schema.js';
import '../../runtime/plugins.js'; // the plug-ins' and index backends' sections are settings too

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
}

const WRAPPERS = new Set(['default', 'optional', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** Every setting of the config schema as a dotted path; a record's key is written `<name>` (e.g. tiers.<name>.burst). */
export function configKeys(schema: z.ZodType = currentConfigSchema() as unknown as z.ZodType): string[] {
  const keys: string[] = [];
  const walk = (node: z.ZodType, at: string[]): void => {
    const def = (node as unknown as { _zod: { def: Def } })._zod.def;
    if (def.type === 'object' && def.shape) {
      for (const [key, child] of Object.entries(def.shape)) walk(child, [...at, key]);
    } else if (WRAPPERS.has(def.type) && def.innerType) walk(def.innerType, at);
    else if (def.type === 'pipe' && def.in) walk(def.in, at);
    else if (def.type === 'record' && def.valueType) walk(def.valueType, [...at, '<name>']);
    else keys.push(at.join('.'));
  };
  walk(schema, []);
  return keys;
}

/** The settings a reference table names in its first column: `a.b.c`, and `.d` short for a sibling of the one before. */
export function documentedKeys(page: string): Set<string> {
  const keys = new Set<string>();
  for (const line of page.split('\n')) {
    if (!line.startsWith('| `')) continue;
    let parent = '';
    for (const [, span = ''] of (line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)) {
      const key = span.startsWith('.') && parent !== '' ? parent + span : span;
      keys.add(key);
      parent = key.includes('.') ? key.slice(0, key.lastIndexOf('.')) : '';
    }
  }
  return keys;
}
