import { describe, expect, it } from "vitest";
import { decideSubscribe, type ExistingSubscription, type SubscribeAsk, type SubscribeDecision } from "./subscribe-decision.ts";

const ask: SubscribeAsk = { groupId: "1", topic: "orders/#", owner: "10.0.0.1" };
const row = (over: Partial<ExistingSubscription>): ExistingSubscription => ({
  active: true,
  groupId: "1",
  topic: "orders/#",
  owner: "10.0.0.1",
  ...over,
});

describe("decideSubscribe", () => {
  const cases: Array<[string, ExistingSubscription | null, Partial<SubscribeAsk>, SubscribeDecision]> = [
    ["no such id: created", null, {}, { kind: "create" }],
    ["live, same group and topic, by the owner: continued with the new URL", row({}), {}, { kind: "continue", switchUrl: true }],
    [
      "live, same group and topic, by another address: continued, the old URL kept",
      row({}),
      { owner: "10.0.0.2" },
      { kind: "continue", switchUrl: false },
    ],
    [
      "live, by another key: the old URL kept",
      row({ owner: "key:aaaaaaaaaaaa" }),
      { owner: "key:bbbbbbbbbbbb" },
      { kind: "continue", switchUrl: false },
    ],
    [
      "live, by the same key from another address: switched",
      row({ owner: "key:aaaaaaaaaaaa" }),
      { owner: "key:aaaaaaaaaaaa" },
      { kind: "continue", switchUrl: true },
    ],
    ["live, another topic: mismatch", row({}), { topic: "orders/eu" }, { kind: "mismatch" }],
    ["live, another group: mismatch", row({}), { groupId: "2" }, { kind: "mismatch" }],
    ["live, another topic, by a stranger: mismatch", row({}), { topic: "x", owner: "10.0.0.9" }, { kind: "mismatch" }],
    ["ended, same group and topic, by the owner: resumed", row({ active: false }), {}, { kind: "resume" }],
    ["ended, another topic, by the owner: created afresh", row({ active: false }), { topic: "other" }, { kind: "create" }],
    ["ended, another group, by the owner: created afresh", row({ active: false }), { groupId: "2" }, { kind: "create" }],
    // Probe defect 2: ending an id and taking it again must not hand it to a stranger.
    ["defect 2: ended, by another address: declined (no takeover)", row({ active: false }), { owner: "10.0.0.2" }, { kind: "decline" }],
    [
      "defect 2: ended, by another key: declined (no takeover)",
      row({ active: false, owner: "key:aaaaaaaaaaaa" }),
      { owner: "key:bbbbbbbbbbbb" },
      { kind: "decline" },
    ],
    [
      "defect 2: ended, by the owner's address but without its key: declined",
      row({ active: false, owner: "key:aaaaaaaaaaaa" }),
      {},
      { kind: "decline" },
    ],
    [
      "defect 2: ended, another topic, by a stranger: declined",
      row({ active: false }),
      { topic: "x", owner: "10.0.0.9" },
      { kind: "decline" },
    ],
    [
      "defect 2: ended, another group, by a stranger: declined",
      row({ active: false }),
      { groupId: "2", owner: "10.0.0.9" },
      { kind: "decline" },
    ],
    [
      "ended, by the owning key from another address: resumed",
      row({ active: false, owner: "key:aaaaaaaaaaaa" }),
      { owner: "key:aaaaaaaaaaaa" },
      { kind: "resume" },
    ],
  ];
  it.each(cases)("%s", (_name, existing, over, expected) => {
    expect(decideSubscribe(existing, { ...ask, ...over })).toEqual(expected);
  });
});
