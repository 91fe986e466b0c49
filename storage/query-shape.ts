import { createQueryId, type Compilable, type CompiledQuery, type QueryResult } from 'kysely';

/** A value's place in a query shape: stands for the i-th argument while the shape is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

/** What runs a compiled query: the database, or one of its transactions. */
export interface ShapeExecutor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/**
 * A query whose structure never changes, only its values: built and compiled by Kysely once (on first use, for the
 * dialect of the database `build` uses: keep one shape per database, e.g. a repository's field), then run with new
 * values by handing the same SQL text new parameters. Kysely builds (immutable, frozen nodes) and compiles every query
 * anew, which was a tenth of a depth-1 search's main thread; the SQL text is the same, so SQLite's statement cache
 * (db.ts) and PostgreSQL see exactly the statement they saw before.
 *
 * `build` must use its arguments as values only (compared, inserted, set), never to decide the query's structure
 * (no `if` on them, no lists for `in`): while compiling, each argument is a placeholder object.
 */
export class QueryShape<Args extends readonly unknown[], Row> {
  private compiled: { sql: string; parameters: readonly unknown[]; query: CompiledQuery<Row>['query'] } | null = null;

  constructor(
    private readonly arity: Args['length'],
    private readonly build: (...args: Args) => Compilable<Row>,
  ) {}

  /** The query with these values, ready to run on `executor` (the database or a transaction of it). */
  compile(...args: Args): CompiledQuery<Row> {
    const shape = (this.compiled ??= this.compileOnce());
    const parameters = shape.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    return { sql: shape.sql, parameters, query: shape.query, queryId: createQueryId() };
  }

  /** Runs the query with these values on `executor`: the database, or a transaction of it. */
  async run(executor: ShapeExecutor, ...args: Args): Promise<QueryResult<Row>> {
    return executor.executeQuery(this.compile(...args));
  }

  /** The first row, as Kysely's executeTakeFirst gives it. */
  async first(executor: ShapeExecutor, ...args: Args): Promise<Row | undefined> {
    return (await this.run(executor, ...args)).rows[0];
  }

  private compileOnce(): { sql: string; parameters: readonly unknown[]; query: CompiledQuery<Row>['query'] } {
    const slots = Array.from({ length: this.arity }, (_, i) => new Slot(i)) as unknown as Args;
    const compiled = this.build(...slots).compile();
    const used = new Set(compiled.parameters.filter((p): p is Slot => p instanceof Slot).map((p) => p.index));
    if (used.size !== this.arity) throw new Error(`a query shape uses ${used.size} of its ${this.arity} arguments as values: ${compiled.sql}`);
    return { sql: compiled.sql, parameters: compiled.parameters, query: compiled.query };
  }
}
