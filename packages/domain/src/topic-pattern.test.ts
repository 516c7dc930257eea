import { describe, expect, it } from "vitest";
import { checkPattern, type MatchRule, matchesPattern, splitLevels, TopicTrie } from "./topic-pattern.ts";

describe("splitLevels", () => {
  it.each([
    ["a/b", ["a", "b"]],
    ["/a", ["", "a"]],
    ["a//b", ["a", "", "b"]],
    ["a/b//", ["a", "b"]],
    ["a", ["a"]],
    ["", [""]],
    ["//", []],
    ["//a", ["", "", "a"]],
  ])("splits %j like Java into %j", (topic, levels) => {
    expect(splitLevels(topic)).toEqual(levels);
  });
});

describe("checkPattern", () => {
  it.each(["#", "com/#", "/#", "+", "+/+", "com/+", "+/#", "+/a#b", "a/+/c", "#/", "a//+", "\x7f/+/\x80"])("accepts %j", (p) => {
    expect(checkPattern(p)).toBeNull();
  });

  it.each([
    ["length over 64 beats bad chars", `+${"中".repeat(64)}`, 100102],
    ["65 code units", `${"a/".repeat(32)}#`, 100102],
    ["code unit above 128", "中/#", 100106],
    ["code unit below 32", "a\x1f/+", 100106],
    ["bad char beats bad shape", "a+\x01", 100106],
    ["+ glued to text", "a+/b", 100109],
    ["+ glued to text in last level", "a/b+", 100109],
    ["two +", "++", 100109],
    ["# not last", "#/a", 100109],
    ["# glued to text", "a#", 100109],
    ["two #", "a/#/#", 100109],
    ["# mid level text", "a/b#c/#", 100109],
  ])("rejects %s: %j → %i", (_why, p, code) => {
    expect(checkPattern(p)?.code).toBe(code);
  });

  it("accepts exactly 64 code units", () => {
    const p = `${"a".repeat(62)}/#`;
    expect(p.length).toBe(64);
    expect(checkPattern(p)).toBeNull();
  });

  it("carries the wire message of the error table", () => {
    expect(checkPattern("a+")?.wireMessage).toBe("invalid topic pattern");
  });
});

// behaviour.md 8.3, the examples table. `m`/`e`: expected result under rule M / rule E.
const TABLE: { pattern: string; topic: string; m: boolean; e: boolean }[] = [
  { pattern: "#", topic: "a", m: true, e: true },
  { pattern: "#", topic: "com/event/abc", m: true, e: true },
  { pattern: "#", topic: "/a", m: true, e: true },
  { pattern: "com/+", topic: "com/event", m: true, e: true },
  { pattern: "com/+", topic: "com/event/abc", m: false, e: false },
  { pattern: "com/+", topic: "com", m: false, e: false },
  { pattern: "com/#", topic: "com/event", m: true, e: true },
  { pattern: "com/#", topic: "com/event/abc", m: true, e: true },
  { pattern: "com/#", topic: "com", m: false, e: true },
  { pattern: "com/#", topic: "org/event", m: false, e: false },
  { pattern: "+/+", topic: "a/b", m: true, e: true },
  { pattern: "+/+", topic: "/b", m: true, e: true },
  { pattern: "+/+", topic: "a", m: false, e: false },
  { pattern: "+/+", topic: "a/b/c", m: false, e: false },
  { pattern: "/#", topic: "/a", m: true, e: true },
  { pattern: "/#", topic: "/a/b", m: true, e: true },
  { pattern: "/#", topic: "a", m: false, e: false },
  { pattern: "+", topic: "a", m: true, e: true },
  { pattern: "+", topic: "a/b", m: false, e: false },
  { pattern: "+", topic: "/a", m: false, e: false },
  // Beyond the table: deep "#" patterns (crashed the original E matcher), literal "#" in "+" patterns.
  { pattern: "a/b/#", topic: "a", m: false, e: false },
  { pattern: "a/b/#", topic: "a/b", m: false, e: true },
  { pattern: "+/#", topic: "a/b", m: false, e: false },
  { pattern: "a/+/c", topic: "a//c", m: true, e: true },
  { pattern: "com.event", topic: "com.event", m: true, e: true },
  { pattern: "com.event", topic: "com.event2", m: false, e: false },
  { pattern: "a", topic: "/a", m: false, e: false },
];

const CASES = TABLE.flatMap((c) => [
  { ...c, rule: "M" as MatchRule, expected: c.m },
  { ...c, rule: "E" as MatchRule, expected: c.e },
]);

describe("matchesPattern", () => {
  it.each(CASES)("$pattern vs $topic under $rule → $expected", ({ pattern, topic, rule, expected }) => {
    expect(matchesPattern(pattern, topic, rule)).toBe(expected);
  });
});

describe("TopicTrie", () => {
  it.each(CASES)("$pattern vs $topic under $rule → $expected", ({ pattern, topic, rule, expected }) => {
    const trie = new TopicTrie<string>();
    trie.add(pattern, "sub", rule);
    expect(trie.match(topic)).toEqual(expected ? ["sub"] : []);
  });

  it("returns every matching entry of a mixed index", () => {
    const trie = new TopicTrie<string>();
    for (const [p, v] of [
      ["#", "all"],
      ["com/+", "com-one"],
      ["com/#", "com-any"],
      ["com/event", "exact"],
      ["+/event", "any-event"],
      ["org/#", "org"],
      ["+", "single"],
    ] as const) {
      trie.add(p, v, "M");
    }
    expect(trie.match("com/event").sort()).toEqual(["all", "any-event", "com-any", "com-one", "exact"]);
    expect(trie.match("com").sort()).toEqual(["all", "single"]);
    expect(trie.size).toBe(7);
  });

  it("keeps the rule per entry for the same pattern", () => {
    const trie = new TopicTrie<string>();
    trie.add("com/#", "m", "M");
    trie.add("com/#", "e", "E");
    expect(trie.match("com")).toEqual(["e"]);
    expect(trie.match("com/x").sort()).toEqual(["e", "m"]);
  });

  it("remove takes out one entry by identity and reports whether it was there", () => {
    const trie = new TopicTrie<{ id: number }>();
    const a = { id: 1 };
    const b = { id: 1 };
    trie.add("com/+", a, "E");
    trie.add("com/+", b, "E");
    trie.add("x", a, "E");
    expect(trie.remove("com/+", { id: 1 })).toBe(false);
    expect(trie.remove("com/#", a)).toBe(false);
    expect(trie.remove("com/+", a)).toBe(true);
    expect(trie.remove("com/+", a)).toBe(false);
    expect(trie.match("com/y")).toEqual([b]);
    expect(trie.remove("x", a)).toBe(true);
    expect(trie.remove("x", a)).toBe(false);
    expect(trie.size).toBe(1);
  });

  it("adding the same pair twice makes two entries until both are removed", () => {
    const trie = new TopicTrie<string>();
    trie.add("a/#", "v", "M");
    trie.add("a/#", "v", "M");
    expect(trie.match("a/b")).toEqual(["v", "v"]);
    expect(trie.remove("a/#", "v")).toBe(true);
    expect(trie.match("a/b")).toEqual(["v"]);
    expect(trie.remove("a/#", "v")).toBe(true);
    expect(trie.match("a/b")).toEqual([]);
    expect(trie.size).toBe(0);
  });

  it("matches through pruned siblings after removals", () => {
    const trie = new TopicTrie<string>();
    trie.add("a/b/c/+", "deep", "M");
    trie.add("a/+", "shallow", "M");
    trie.add("a/b/c/#", "hash-deep", "M");
    trie.add("a/#", "hash-shallow", "M");
    expect(trie.remove("a/b/c/+", "deep")).toBe(true);
    expect(trie.remove("a/b/c/#", "hash-deep")).toBe(true);
    expect(trie.match("a/b").sort()).toEqual(["hash-shallow", "shallow"]);
    expect(trie.match("a/b/c/d")).toEqual(["hash-shallow"]);
  });
});

/** mulberry32: a tiny seeded generator so the property test is the same on every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("TopicTrie agrees with matchesPattern", () => {
  const random = seeded(0x5eed);
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(random() * xs.length)] as X;
  const joinLevels = (levels: string[]) => levels.join("/") + (random() < 0.1 ? "/" : "");
  const randomTopic = () => joinLevels(Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(["a", "b", ""])));
  // Mostly valid patterns, plus some the validator would reject, so both code paths agree on them too.
  const randomPattern = () => {
    const n = 1 + Math.floor(random() * 4);
    const levels = Array.from({ length: n }, () => pick(["a", "b", "", "+", "+", "#", "a#", "x+"]));
    if (random() < 0.4) levels[n - 1] = "#";
    return joinLevels(levels);
  };

  it("for 5000 seeded topics against 400 patterns, before and after removals", () => {
    const trie = new TopicTrie<number>();
    const entries: { pattern: string; rule: MatchRule; id: number; live: boolean }[] = [];
    for (let id = 0; id < 400; id++) {
      const pattern = random() < 0.2 ? randomTopic() : randomPattern();
      const rule: MatchRule = random() < 0.5 ? "M" : "E";
      entries.push({ pattern, rule, id, live: true });
      trie.add(pattern, id, rule);
    }
    const check = () => {
      for (let i = 0; i < 2500; i++) {
        const topic = randomTopic();
        const expected = entries.filter((e) => e.live && matchesPattern(e.pattern, topic, e.rule)).map((e) => e.id);
        expect(
          trie.match(topic).sort((x, y) => x - y),
          topic,
        ).toEqual(expected);
      }
    };
    check();
    for (const e of entries) {
      if (random() < 0.5) {
        e.live = false;
        expect(trie.remove(e.pattern, e.id)).toBe(true);
      }
    }
    expect(trie.size).toBe(entries.filter((e) => e.live).length);
    check();
  });
});
