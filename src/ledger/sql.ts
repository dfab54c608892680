/**
 * The ledger's database port: parameterised SQL ($1, $2, ...) against PostgreSQL. Two adapters run
 * the same migrations and the same queries: postgres.ts (a PostgreSQL server, `DATABASE_URL`) and
 * pglite.ts (PGlite, PostgreSQL compiled to WebAssembly, embedded in the process, its files in the
 * data folder: the paper setup's and the sandbox's default).
 *
 * Value conventions, so both adapters give the same rows: parameters are strings, numbers, booleans or
 * null (undefined is sent as null); queries cast what they return to text (amounts, NUMERIC), to
 * float8 (times in ms), or to int4, never returning int8 or timestamps raw (the two drivers map those
 * differently).
 */
export type SqlValue = string | number | boolean | null | undefined;

export interface SqlQueries {
  query<T extends object = Record<string, unknown>>(text: string, params?: readonly SqlValue[]): Promise<T[]>;
}

export interface SqlClient extends SqlQueries {
  /** "postgres" or "pglite", and where it is (a redacted URL or the folder), for logs and the banner. */
  readonly kind: "postgres" | "pglite";
  readonly description: string;
  /** Several statements, no parameters (migrations). */
  exec(text: string): Promise<void>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<R>(fn: (tx: SqlQueries) => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

export const toParams = (params: readonly SqlValue[] = []): (string | number | boolean | null)[] =>
  params.map((p) => (p === undefined ? null : p));
