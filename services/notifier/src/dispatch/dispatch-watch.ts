import { END_OF_BLOCK, type LedgerPosition } from "@evb/storage";

/** One look at a group's dispatch: its cursor (null before the first run) and the sealed head. */
export interface DispatchSample {
  groupId: string;
  cursor: LedgerPosition | null;
  head: number;
}

/** A group whose cursor has stood still behind the head for longer than the bound. */
export interface StuckDispatch {
  groupId: string;
  cursorHeight: number;
  head: number;
  stillForMs: number;
}

function behind(s: DispatchSample): boolean {
  if (!s.cursor) return s.head > 0;
  return s.cursor.height < s.head || (s.cursor.height === s.head && s.cursor.idx < END_OF_BLOCK);
}

const same = (a: LedgerPosition | null, b: LedgerPosition | null) => a?.height === b?.height && a?.idx === b?.idx;

/**
 * Decides from samples whether dispatch is stuck: a group is stuck when the ledger holds events
 * after its cursor and the cursor has not moved for longer than `stuckAfterMs`. A cursor that
 * is level with the head is idle, not stuck. Time is an argument, so this is pure.
 */
export class DispatchWatch {
  private readonly stuckAfterMs: number;
  /** Per group: the cursor last seen behind the head, and since when it has been there. */
  private readonly still = new Map<string, { cursor: LedgerPosition | null; head: number; since: number }>();

  constructor(stuckAfterMs: number) {
    this.stuckAfterMs = stuckAfterMs;
  }

  observe(s: DispatchSample, now: number): void {
    if (!behind(s)) {
      this.still.delete(s.groupId);
      return;
    }
    const prev = this.still.get(s.groupId);
    if (prev && same(prev.cursor, s.cursor)) prev.head = s.head;
    else this.still.set(s.groupId, { cursor: s.cursor, head: s.head, since: now });
  }

  stuck(now: number): StuckDispatch[] {
    const out: StuckDispatch[] = [];
    for (const [groupId, s] of this.still) {
      const stillForMs = now - s.since;
      if (stillForMs > this.stuckAfterMs) out.push({ groupId, cursorHeight: s.cursor?.height ?? 0, head: s.head, stillForMs });
    }
    return out;
  }
}
