// A ledger position is a domain value (packages/domain/src/ledger-position.ts); the stores import it from here.
export { END_OF_BLOCK, type LedgerPosition } from "@evb/domain";
