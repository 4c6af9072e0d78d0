export const PLATFORM_SCHEMA = 'plinth';

/** One platform migration, applied once in its own transaction (storage/migrations.ts). */
export interface Migration {
  version: number;
  name: string;
  /** One statement per entry: CockroachDB and pg's extended protocol take one at a time. */
  statements: string[];
  /** CockroachDB's statements where its DDL differs from PostgreSQL's (e.g. a UNIQUE constraint is dropped as an index). */
  cockroachStatements?: string[];
}
