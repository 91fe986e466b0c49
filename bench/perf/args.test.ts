import { describe, expect, it } from 'vitest';
import { BenchArgsError, DEFAULT_ARGS, parseBenchArgs } from './args.js';

describe('parseBenchArgs', () => {
  it('defaults to the full run', () => {
    expect(parseBenchArgs([])).toEqual(DEFAULT_ARGS);
  });

  it('--quick shrinks the query counts unless they are given', () => {
    const quick = parseBenchArgs(['--quick']);
    expect(quick.quick).toBe(true);
    expect(quick.queries).toBe(50);
    expect(quick.throughputQueries).toBe(10);
    expect(parseBenchArgs(['--quick', '--queries', '10']).queries).toBe(10);
    expect(parseBenchArgs(['--quick', '--queries', '10']).throughputQueries).toBe(10);
  });

  it('reads values separated by a space or =', () => {
    const args = parseBenchArgs(['--queries=120', '--out', '/tmp/x.json', '--rerank', '0,5', '--concurrency=32']);
    expect(args.queries).toBe(120);
    expect(args.out).toBe('/tmp/x.json');
    expect(args.rerankTopN).toEqual([0, 5]);
    expect(args.concurrency).toBe(32);
  });

  it('rejects bad input with a readable message', () => {
    expect(() => parseBenchArgs(['--queries', 'many'])).toThrow(BenchArgsError);
    expect(() => parseBenchArgs(['--queries', '0'])).toThrow(/integer >= 1/);
    expect(() => parseBenchArgs(['--queries'])).toThrow(/got nothing/);
    expect(() => parseBenchArgs(['--out'])).toThrow(/file name/);
    expect(() => parseBenchArgs(['--rerank', ''])).toThrow(BenchArgsError);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/unknown argument/);
  });

  it('reads two-model variants: search settings per server, separated by ";"', () => {
    expect(parseBenchArgs(['--two-model-variants', 'cross_encoder_window_words=40,cross_encoder_batch_wait_ms=5;cross_encoder_window_words=30']).twoModelVariants).toEqual([
      { cross_encoder_window_words: 40, cross_encoder_batch_wait_ms: 5 },
      { cross_encoder_window_words: 30 },
    ]);
    expect(() => parseBenchArgs(['--two-model-variants', 'cross_encoder_window_words'])).toThrow(/setting=number/);
    expect(() => parseBenchArgs(['--two-model-variants', ';'])).toThrow(/at least one/);
  });

  it('reads the vector stores to serve beside FTS5, for a backend that has a store of its own', () => {
    const shared = ['--backend', 'meilisearch', '--meilisearch-url', 'http://127.0.0.1:7700'];
    expect(parseBenchArgs([...shared, '--vectors', 'meilisearch, service']).vectors).toEqual(['meilisearch', 'service']);
    expect(() => parseBenchArgs([...shared, '--vectors', ''])).toThrow(/--vectors needs a list/);
    expect(() => parseBenchArgs(['--vectors', 'service'])).toThrow(/--vectors is for --backend postgres or meilisearch/);
  });

  it('adds PostgreSQL to a run of another backend only with a server to put it in', () => {
    const meili = ['--backend', 'meilisearch', '--meilisearch-url', 'http://127.0.0.1:7700'];
    expect(parseBenchArgs(meili).withPostgres).toBe(false);
    expect(parseBenchArgs([...meili, '--with-postgres', '--database-url', 'postgres://postgres@127.0.0.1:5432/postgres']).withPostgres).toBe(true);
    expect(() => parseBenchArgs([...meili, '--with-postgres'])).toThrow(/--with-postgres needs --database-url/);
    expect(() => parseBenchArgs(['--backend', 'postgres', '--database-url', 'postgres://x', '--with-postgres'])).toThrow(/already/);
  });

  it('keeps the data folder only when asked', () => {
    expect(parseBenchArgs([]).keepData).toBe(false);
    expect(parseBenchArgs(['--quick', '--keep-data']).keepData).toBe(true);
  });
});
