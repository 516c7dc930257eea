import { describe, expect, it } from "vitest";
import { BrokerError, topicHash8 } from "@evb/domain";
import fc from "fast-check";
import { matchesPattern } from "@evb/domain";
import {
  checkItem,
  compileFilter,
  destinationItems,
  itemCountRefusal,
  listedTopicName,
  startPosition,
  subscriptionIdFor,
  takesEvent,
} from "./subscribe-request.ts";

const codeOf = (v: unknown) => (v instanceof BrokerError ? v.code : null);

describe("destinationItems", () => {
  it("splits on commas without trimming and drops trailing empty items, as Java's split", () => {
    expect(destinationItems("a,b/#, c")).toEqual(["a", "b/#", " c"]);
    expect(destinationItems("a,b,,")).toEqual(["a", "b"]);
  });

  it("no destination, an empty list or an empty item is 100105", () => {
    for (const d of [undefined, "", ",", "a,,b"]) expect(codeOf(destinationItems(d)), String(d)).toBe(100105);
  });
});

describe("startPosition", () => {
  const t = "com.event.test";
  const id = (seq: number, block: number, topic = t) => `${topicHash8(topic)}-${seq}-${block}`;

  it("blank and OFFSET_LAST start after the head; OFFSET_FIRST from the start", () => {
    expect(startPosition(undefined, [t], 5)).toEqual({ kind: "last" });
    expect(startPosition(" ", [t], 5)).toEqual({ kind: "last" });
    expect(startPosition("OFFSET_LAST", [t], 5)).toEqual({ kind: "last" });
    expect(startPosition("OFFSET_FIRST", [t], 5)).toEqual({ kind: "first" });
  });

  it("a height must be 1..the head (100307)", () => {
    expect(startPosition("3", [t], 5)).toEqual({ kind: "height", height: 3 });
    expect(startPosition("5", [t], 5)).toEqual({ kind: "height", height: 5 });
    for (const h of ["0", "6", "99999999999999999999"]) expect(codeOf(startPosition(h, [t], 5)), h).toBe(100307);
  });

  it("an event id: malformed 100302, too long 100301, another topic's (single item) 100302, above the head 100304", () => {
    expect(startPosition(id(2, 4), [t], 5)).toEqual({ kind: "after", eventId: id(2, 4), block: 4 });
    expect(codeOf(startPosition("abc", [t], 5))).toBe(100302);
    expect(codeOf(startPosition("x".repeat(65), [t], 5))).toBe(100301);
    expect(codeOf(startPosition(id(2, 4, "other"), [t], 5))).toBe(100302);
    expect(codeOf(startPosition(id(0, 4), [t], 5))).toBe(100302);
    expect(codeOf(startPosition(id(2, 6), [t], 5))).toBe(100304);
  });

  it("the topic hash is checked only for one item, so a single pattern with an event id is always 100302", () => {
    expect(startPosition(id(2, 4, "other"), [t, "other"], 5)).toMatchObject({ kind: "after" });
    expect(codeOf(startPosition(id(2, 4), ["com.event.test/#"], 5))).toBe(100302);
  });
});

describe("checkItem", () => {
  it("patterns follow the pattern rules, names the name rules", () => {
    expect(checkItem("a/#")).toBeNull();
    expect(checkItem("a/+/b")).toBeNull();
    expect(codeOf(checkItem("a+/b"))).toBe(100109);
    expect(codeOf(checkItem("a/b/"))).toBe(100106);
    expect(codeOf(checkItem(" "))).toBe(100103);
    expect(codeOf(checkItem("x".repeat(65)))).toBe(100102);
  });
});

describe("subscriptionIdFor", () => {
  const uuid = "3f9d2c41-8b7e-4a15-9c0d-6e2a71b5f804";
  it("blank → a new id; not a UUID 100505; live 100507; otherwise the given id", () => {
    expect(
      subscriptionIdFor(
        undefined,
        () => false,
        () => "new",
      ),
    ).toBe("new");
    expect(
      subscriptionIdFor(
        "",
        () => false,
        () => "new",
      ),
    ).toBe("new");
    expect(
      codeOf(
        subscriptionIdFor(
          "abc",
          () => false,
          () => "new",
        ),
      ),
    ).toBe(100505);
    expect(
      codeOf(
        subscriptionIdFor(
          ` ${uuid}`,
          () => false,
          () => "new",
        ),
      ),
    ).toBe(100505);
    expect(
      codeOf(
        subscriptionIdFor(
          uuid,
          (id) => id === uuid,
          () => "new",
        ),
      ),
    ).toBe(100507);
    expect(
      subscriptionIdFor(
        uuid,
        () => false,
        () => "new",
      ),
    ).toBe(uuid);
  });
});

describe("takesEvent", () => {
  it("matches names, + and # patterns by the M rule, and the tag under the client's spelling", () => {
    const f = { items: ["a", "b/#", "c/+"], tag: null };
    expect(takesEvent(f, "a", {})).toBe(true);
    expect(takesEvent(f, "b", {})).toBe(false);
    expect(takesEvent(f, "b/x/y", {})).toBe(true);
    expect(takesEvent(f, "c/x", {})).toBe(true);
    expect(takesEvent(f, "c/x/y", {})).toBe(false);
    const tagged = { items: ["a"], tag: { keys: ["weevent-tag"], value: "x" } };
    expect(takesEvent(tagged, "a", { "weevent-tag": "x" })).toBe(true);
    expect(takesEvent(tagged, "a", { "event-tag": "x" })).toBe(false);
    expect(takesEvent(tagged, "a", {})).toBe(false);
  });
});

describe("listedTopicName", () => {
  it("writes one item bare and a list bracketed", () => {
    expect(listedTopicName(["a"])).toBe("a");
    expect(listedTopicName(["a", "b"])).toBe("[a, b]");
  });
});

describe("the cost of a destination list", () => {
  it("more than the cap is 100110; the cap itself passes", () => {
    expect(itemCountRefusal(["a", "b", "c"], 3)).toBeNull();
    expect(
      codeOf(
        itemCountRefusal(
          Array.from({ length: 12_000 }, () => "+"),
          100,
        ),
      ),
    ).toBe(100110);
  });

  it("a compiled filter takes what the list scan of the M rule takes", () => {
    const level = fc.constantFrom("a", "b", "+", "#", "");
    const item = fc.array(level, { minLength: 1, maxLength: 4 }).map((l) => l.join("/"));
    const topic = fc.array(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 4 }).map((l) => l.join("/"));
    fc.assert(
      fc.property(
        fc.array(
          item.filter((i) => checkItem(i) === null),
          { minLength: 1, maxLength: 12 },
        ),
        fc.array(topic, { maxLength: 8 }),
        (items, topics) => {
          const takes = compileFilter({ items, tag: null });
          for (const t of topics) expect(takes(t, {}), `${t} in ${items.join(",")}`).toBe(items.some((i) => matchesPattern(i, t, "M")));
        },
      ),
      { numRuns: 300 },
    );
  });
});
