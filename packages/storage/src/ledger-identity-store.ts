import type pg from "pg";

/**
 * The ledger's identity (`ledger_identity`, one row made by the migrations), as the ledger guards
 * read it on every look. Tables that are gone reject (42P01): the guard refuses the ledger then.
 */
export class LedgerIdentityStore {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The ledger's identity; "" while it has none. */
  async read(): Promise<string> {
    return (await this.pool.query<{ id: string }>("SELECT id FROM ledger_identity")).rows[0]?.id ?? "";
  }
}
