import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NotaryError } from '../core/errors.js';
import { activeCalibrations, calibrateList, CALIBRATED_THRESHOLD, coverage, findCalibration, modelFolderName, readCalibrations, type CalibrationEntry } from './calibration.js';

const params = { modelWeight: 12, coverageWeight: 3, bias: -10 };
const dir = mkdtempSync(path.join(tmpdir(), 'notary-calibration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('calibrateList', () => {
  it('keeps the order of a list: strictly increasing in the fused score, equal scores stay equal, all within 0..1', () => {
    const fused = [0.93, 0.9, 0.9, 0.71, 0.4, 0.05, 0];
    const out = calibrateList(params, { model: 0.8, coverage: 1 }, fused);
    expect(out).toHaveLength(fused.length);
    for (let i = 1; i < out.length; i++) {
      if (fused[i] === fused[i - 1]) expect(out[i]).toBe(out[i - 1]);
      else expect(out[i]!).toBeLessThan(out[i - 1]!);
    }
    for (const s of out) expect(s >= 0 && s <= 1).toBe(true);
  });

  it('is monotone in the fused score for any evidence, and a list with weak evidence scores lower at every rank', () => {
    const fused = Array.from({ length: 50 }, (_, i) => 1 - i / 50);
    const strong = calibrateList(params, { model: 0.8, coverage: 1 }, fused);
    const weak = calibrateList(params, { model: 0.55, coverage: 0 }, fused);
    for (let i = 0; i < fused.length; i++) expect(weak[i]!).toBeLessThan(strong[i]!);
    expect(strong[0]!).toBeGreaterThanOrEqual(CALIBRATED_THRESHOLD);
    expect(weak[0]!).toBeLessThan(CALIBRATED_THRESHOLD);
  });

  it('is anchored on the best result, not on the fused level: adding a constant to every fused score changes nothing', () => {
    const a = calibrateList(params, { model: 0.7, coverage: 0.5 }, [0.6, 0.5, 0.2]);
    const b = calibrateList(params, { model: 0.7, coverage: 0.5 }, [0.9, 0.8, 0.5]);
    a.forEach((s, i) => expect(s).toBeCloseTo(b[i]!, 12));
  });

  it('gives back the fused scores without a calibration or evidence (unknown models: today\'s scores)', () => {
    expect(calibrateList(null, { model: 0.7, coverage: 1 }, [0.9, 0.3])).toEqual([0.9, 0.3]);
    expect(calibrateList(params, null, [0.9, 0.3])).toEqual([0.9, 0.3]);
    expect(calibrateList(params, { model: 0.7, coverage: 1 }, [])).toEqual([]);
  });
});

describe('coverage', () => {
  it('is the share of the query\'s content-word stems in the text', () => {
    expect(coverage('vacuum dead tuples', 'VACUUM reclaims storage occupied by dead tuples.')).toBe(1);
    expect(coverage('vacuum dead tuples', 'Checkpoints flush dirty pages.')).toBe(0);
    expect(coverage('vacuum boundary layer', 'vacuum')).toBeCloseTo(1 / 3);
  });
});

describe('the calibration registry', () => {
  const entry = (over: Partial<CalibrationEntry>): CalibrationEntry => ({
    model: 'all-MiniLM-L6-v2',
    kind: 'bi-encoder',
    onnx_sha256: 'a'.repeat(64),
    parameters: params,
    ...over,
  });

  it('finds a model by its .onnx sha256, else its quantised copy by folder name and kind, else none', () => {
    const entries = [entry({}), entry({ model: 'other', onnx_sha256: 'b'.repeat(64), parameters: { modelWeight: 1, coverageWeight: 0, bias: 0 } })];
    expect(findCalibration(entries, { kind: 'bi-encoder', onnxSha256: 'b'.repeat(64), name: 'x' })?.model).toBe('other');
    expect(findCalibration(entries, { kind: 'bi-encoder', onnxSha256: 'c'.repeat(64), name: 'all-MiniLM-L6-v2' })?.model).toBe('all-MiniLM-L6-v2');
    expect(findCalibration(entries, { kind: 'cross-encoder', onnxSha256: 'c'.repeat(64), name: 'all-MiniLM-L6-v2' })).toBeNull();
    expect(findCalibration(entries, { kind: 'cross-encoder', onnxSha256: 'd'.repeat(64), name: 'ms-marco-MiniLM-L-6-v2' })).toBeNull();
  });

  it('names a model by its folder, "-int8" dropped', () => {
    expect(modelFolderName('/m/all-MiniLM-L6-v2/onnx/model.onnx')).toBe('all-MiniLM-L6-v2');
    expect(modelFolderName('/cache/all-MiniLM-L6-v2-int8/model_int8.onnx')).toBe('all-MiniLM-L6-v2');
  });

  it('reads the operator\'s NOTARY_CALIBRATION_FILE before the built-in entries; a bad file is invalid_config naming the setting', () => {
    const own = path.join(dir, 'own.json');
    writeFileSync(own, JSON.stringify({ calibrations: [entry({ model: 'mine' })] }));
    expect(activeCalibrations({ NOTARY_CALIBRATION_FILE: own })[0]?.model).toBe('mine');
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ calibrations: [entry({ parameters: { modelWeight: -1, coverageWeight: 0, bias: 0 } })] }));
    expect(() => readCalibrations(bad)).toThrow(NotaryError);
    expect(() => readCalibrations(bad)).toThrow(/NOTARY_CALIBRATION_FILE/);
    expect(() => readCalibrations(path.join(dir, 'absent.json'))).toThrow(/invalid_config|cannot be read/);
  });
});
