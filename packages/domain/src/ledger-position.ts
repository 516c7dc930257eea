/** A cursor index above every real event index: "everything in this block is behind us". */
export const END_OF_BLOCK = 2_147_483_647;

/** A position in a group's ledger: every event at or before `(height, idx)`. */
export interface LedgerPosition {
  height: number;
  idx: number;
}
