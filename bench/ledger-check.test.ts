import { describe, expect, it } from "vitest";
import { judgeLedger } from "./ledger-check.ts";

const counts = { scenario: "closed loop 8", acknowledged: 100, duplicates: 0, missing: 0, inLedger: 100, unansweredBound: 8 };

describe("judgeLedger", () => {
  it("accepts a ledger holding every acknowledged event and nothing else", () => {
    expect(judgeLedger(counts, 100)).toMatchObject({ ok: true, unanswered: 0 });
  });

  it("accepts extra events only up to the publishes left in flight when the generator stopped", () => {
    expect(judgeLedger({ ...counts, inLedger: 108 }, 100)).toMatchObject({ ok: true, unanswered: 8 });
    expect(judgeLedger({ ...counts, inLedger: 109 }, 100).ok).toBe(false);
  });

  it("rejects a lost acknowledged event, an event id answered twice, or fewer events than answers", () => {
    expect(judgeLedger({ ...counts, missing: 1, inLedger: 99 }, 100).ok).toBe(false);
    expect(judgeLedger({ ...counts, duplicates: 1 }, 99).ok).toBe(false);
    expect(judgeLedger({ ...counts, inLedger: 99 }, 100).ok).toBe(false);
  });
});
