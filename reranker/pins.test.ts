import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNotaryError } from '../core/errors.js';
import { PINNED_MODELS } from './models.js';
import { activePins } from './pins.js';

const dir = mkdtempSync(path.join(tmpdir(), 'notary-pins-'));
const write = (name: string, value: unknown): string => {
  const file = path.join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};
const one = (filePath: string) => [
  { name: 'm', kind: 'bi-encoder', repo: 'o/m', revision: 'r', onnxFile: 'onnx/model.onnx', files: [{ path: filePath, sha256: 'a'.repeat(64), bytes: 3 }] },
];

describe('activePins', () => {
  it('is the built-in pins without NOTARY_MODEL_PINS, and the named manifest with it', () => {
    expect(activePins({})).toBe(PINNED_MODELS);
    expect(PINNED_MODELS.map((p) => p.kind)).toEqual(['cross-encoder', 'bi-encoder']);
    expect(activePins({ NOTARY_MODEL_PINS: write('good.json', one('onnx/model.onnx')) })[0]?.files[0]?.path).toBe('onnx/model.onnx');
  });

  it('refuses an unreadable manifest, a bad hash and a path out of the model folder, naming the file', () => {
    const cases: Array<[string, RegExp]> = [
      [path.join(dir, 'missing.json'), /cannot be read/],
      [write('text.json', 'not json'), /cannot be read/],
      [write('hash.json', [{ ...one('a')[0], files: [{ path: 'a', sha256: 'XYZ' }] }]), /files\.0\.sha256: a lowercase hex sha256/],
      [write('up.json', one('../../etc/passwd')), /files\.0\.path: a relative path inside the model folder/],
      [write('abs.json', one('/etc/passwd')), /a relative path inside the model folder/],
    ];
    for (const [file, message] of cases) {
      let caught: unknown;
      try {
        activePins({ NOTARY_MODEL_PINS: file });
      } catch (err) {
        caught = err;
      }
      expect(isNotaryError(caught) && caught.code, file).toBe('invalid_config');
      expect((caught as Error).message).toContain(`NOTARY_MODEL_PINS=${file}`);
      expect((caught as Error).message).toMatch(message);
    }
  });
});
