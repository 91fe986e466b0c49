import type { z } from 'zod';
import { schemaSettings } from '../../scripts/config-reference.js';

/** Every setting of the config schema as a dotted path; a record's key is written `<name>` (e.g. tiers.<name>.burst). */
export function configKeys(schema?: z.ZodType): string[] {
  return schemaSettings(schema).map((setting) => setting.key);
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
