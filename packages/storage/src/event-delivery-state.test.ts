import { describe, expect, it } from "vitest";
import { type EventDeliveryFacts, eventDeliveryState } from "./event-delivery-state.ts";

const FACTS: EventDeliveryFacts = {
  inBacklog: false,
  head: false,
  dead: false,
  answered2xx: false,
  delivered: { height: 10, idx: 3 },
  startHeight: 5,
};
const EV = { height: 8, idx: 0 };

describe("eventDeliveryState", () => {
  it("an event in the backlog is pending, even when a 2xx for it was logged (a replay put it back)", () => {
    expect(eventDeliveryState(EV, { ...FACTS, inBacklog: true, answered2xx: true })).toBe("pending");
  });

  it("the head of a suspended backlog is dead-lettered; the events behind it are pending", () => {
    expect(eventDeliveryState(EV, { ...FACTS, inBacklog: true, head: true, dead: true })).toBe("dead-lettered");
    expect(eventDeliveryState(EV, { ...FACTS, inBacklog: true, head: false, dead: true })).toBe("pending");
    expect(eventDeliveryState(EV, { ...FACTS, inBacklog: true, head: true, dead: false })).toBe("pending");
  });

  it("a logged 2xx is delivered, wherever the cursor stands", () => {
    expect(eventDeliveryState({ height: 2, idx: 0 }, { ...FACTS, answered2xx: true })).toBe("delivered");
  });

  it("an event the cursor passed is delivered when published after the start, before-start otherwise", () => {
    expect(eventDeliveryState(EV, FACTS)).toBe("delivered");
    expect(eventDeliveryState({ height: 10, idx: 3 }, FACTS)).toBe("delivered");
    expect(eventDeliveryState({ height: 5, idx: 9 }, FACTS)).toBe("before-start");
  });

  it("an event after the cursor and not in the backlog is pending (not matched yet)", () => {
    expect(eventDeliveryState({ height: 10, idx: 4 }, FACTS)).toBe("pending");
    expect(eventDeliveryState({ height: 11, idx: 0 }, FACTS)).toBe("pending");
  });
});
