import { describe, expect, it } from "vitest";
import { IndexerState } from "./indexer-state.ts";

describe("IndexerState: a failed seal", () => {
  const setup = () => {
    let t = 1_000;
    const state = new IndexerState({ groups: ["1"], topicPrefix: "p.", queryTimeoutMs: 10_000, readyMaxLag: 100, now: () => t });
    state.consuming();
    return { state, advance: (ms: number) => (t += ms), now: () => t };
  };

  it("keeps the indexer not ready until a seal succeeds", () => {
    const { state } = setup();
    state.sealFailed("the last seal failed: Query read timeout");
    expect(state.readiness()).toEqual({ ready: false, reason: "the last seal failed: Query read timeout" });
    state.sealSucceeded();
    expect(state.readiness()).toEqual({ ready: true });
  });

  it("is cleared by the ledger answering a look after it, not by one answered before", () => {
    const { state, advance, now } = setup();
    const before = now();
    advance(500);
    state.sealFailed("the last seal failed: Connection terminated");
    state.ledgerAnswered(before);
    expect(state.readiness()).toMatchObject({ ready: false });
    advance(500);
    state.ledgerAnswered(now());
    expect(state.readiness()).toEqual({ ready: true });
  });
});
