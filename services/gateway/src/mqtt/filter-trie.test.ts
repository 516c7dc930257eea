import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FilterTrie } from "./filter-trie.ts";
import { checkFilter, filterMatches } from "./topic-filter.ts";

/** Filters and topics over a few short levels, `$` first levels and empty levels included, so they meet often. */
const level = fc.constantFrom("a", "b", "", "$s");
const topic = fc.array(level, { minLength: 1, maxLength: 4 }).map((l) => l.join("/"));
const filter = fc
  .tuple(fc.array(fc.constantFrom("a", "b", "", "$s", "+"), { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([l, hash]) => (hash ? [...l, "#"] : l).join("/"))
  .filter((f) => checkFilter(f) === null);

describe("FilterTrie (MQTT's rule)", () => {
  it("finds exactly the filters filterMatches says take a topic", () => {
    fc.assert(
      fc.property(fc.uniqueArray(filter, { maxLength: 30 }), fc.array(topic, { minLength: 1, maxLength: 10 }), (filters, topics) => {
        const trie = new FilterTrie<string>();
        for (const f of filters) trie.add(f, f);
        for (const t of topics)
          expect(trie.match(t).sort(), `${t} in ${filters.join(" ")}`).toEqual(filters.filter((f) => filterMatches(f, t)).sort());
      }),
      { numRuns: 300 },
    );
  });

  it("`a/#` takes `a` (unlike the M rule); a first-level wildcard never takes `$` topics", () => {
    const trie = new FilterTrie<string>();
    for (const f of ["a/#", "#", "+/x", "$s/#", "a/+"]) trie.add(f, f);
    expect(trie.match("a").sort()).toEqual(["#", "a/#"]);
    expect(trie.match("$s/x").sort()).toEqual(["$s/#"]);
    expect(trie.match("a/x").sort()).toEqual(["#", "+/x", "a/#", "a/+"]);
  });

  it("removes one entry at a time; a removed filter takes nothing", () => {
    const trie = new FilterTrie<number>();
    trie.add("a/+/c", 1);
    trie.add("a/+/c", 2);
    trie.add("a/#", 3);
    expect(trie.remove("a/+/c", 1)).toBe(true);
    expect(trie.remove("a/+/c", 1)).toBe(false);
    expect(trie.remove("x/y", 1)).toBe(false);
    expect(trie.match("a/b/c").sort()).toEqual([2, 3]);
    expect(trie.remove("a/+/c", 2)).toBe(true);
    expect(trie.remove("a/#", 3)).toBe(true);
    expect(trie.match("a/b/c")).toEqual([]);
  });
});
