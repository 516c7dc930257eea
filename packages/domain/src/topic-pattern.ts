import { BrokerError } from "./errors.ts";
import { TOPIC_MAX_LENGTH } from "./topic-name.ts";

/** `M`: `com/#` needs at least one level after `com`. `E`: `#` may also stand for zero levels. */
export type MatchRule = "M" | "E";

/** Java String.split("/") semantics: leading and middle empty levels kept, trailing empty levels dropped. */
export function splitLevels(topic: string): string[] {
  // Java returns the input itself when the separator never occurs, so "" is one empty level.
  if (!topic.includes("/")) return [topic];
  const levels = topic.split("/");
  while (levels.length > 0 && levels[levels.length - 1] === "") levels.pop();
  return levels;
}

/**
 * Pattern validation for a subscribe topic that contains "+" or "#" (behaviour.md 8.3), first
 * failure wins: length > 64 → 100102; a code unit < 32 or > 128 → 100106; with "+", a level that
 * contains "+" but is not exactly "+" → 100109 ("#" is not examined, so `+/#` passes and simply
 * never matches); with only "#", anything but exactly one "#" forming the whole last level →
 * 100109. Returns null when valid. Callers route plain names to checkTopicName instead: a string
 * without wildcards fails step 3b here.
 */
export function checkPattern(pattern: string): BrokerError | null {
  if (pattern.length > TOPIC_MAX_LENGTH) return BrokerError.of("TOPIC_TOO_LONG");
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i);
    if (c < 32 || c > 128) return BrokerError.of("TOPIC_INVALID_CHAR");
  }
  const levels = splitLevels(pattern);
  if (pattern.includes("+")) {
    for (const level of levels) {
      if (level.includes("+") && level !== "+") return BrokerError.of("PATTERN_INVALID");
    }
    return null;
  }
  const hashes = pattern.split("#").length - 1;
  if (hashes !== 1 || levels[levels.length - 1] !== "#") return BrokerError.of("PATTERN_INVALID");
  return null;
}

type PatternKind = "plain" | "plus" | "hash";

function kindOf(pattern: string): PatternKind {
  if (pattern.includes("+")) return "plus";
  if (pattern.includes("#")) return "hash";
  return "plain";
}

/**
 * Does event topic T match subscription P? Plain P (no + or #): exact equality. "+" patterns: same
 * number of levels, every non-"+" level equal (a "#" inside such a pattern is literal, so never
 * matches a valid topic). "#"-only patterns: every level before the final one (the "#") equals T's
 * level; rule "M": P may not have more levels than T (com/# does not match com); rule "E": # may
 * stand for zero levels (com/# matches com); a pattern two or more levels longer than the topic is
 * no match (the original E matcher crashed there, behaviour.md 10.6).
 */
export function matchesPattern(pattern: string, topic: string, rule: MatchRule): boolean {
  const kind = kindOf(pattern);
  if (kind === "plain") return pattern === topic;
  const p = splitLevels(pattern);
  const t = splitLevels(topic);
  if (kind === "plus") {
    if (p.length !== t.length) return false;
    return p.every((level, i) => level === "+" || level === t[i]);
  }
  const maxLevels = rule === "M" ? t.length : t.length + 1;
  if (p.length > maxLevels) return false;
  for (let i = 0; i < p.length - 1; i++) if (p[i] !== t[i]) return false;
  return true;
}

interface Entry<T> {
  value: T;
  rule: MatchRule;
}

/**
 * One trie level. `literal` children hold exact level strings (a "#" inside a "+" pattern is a
 * literal level); `plus` is the single-level wildcard. `here` holds entries whose pattern ends at
 * this depth: for "+" patterns the whole pattern, for "#" patterns the prefix before the "#".
 */
class TrieNode<T> {
  readonly literal = new Map<string, TrieNode<T>>();
  plus: TrieNode<T> | undefined;
  readonly here: Entry<T>[] = [];

  isEmpty(): boolean {
    return this.here.length === 0 && this.literal.size === 0 && this.plus === undefined;
  }
}

/**
 * Index of subscriptions by topic or pattern so that matching an event costs about the topic's
 * depth, not the number of subscriptions. Plain topics sit in a hash map; "+" patterns in a trie
 * walked along both the literal level and the "+" branch; "#" patterns in a literal trie of their
 * prefixes, collected while walking down the topic's levels. Adding the same (pattern, value)
 * twice makes two entries, and the value is then returned twice.
 */
export class TopicTrie<T> {
  readonly #plain = new Map<string, Entry<T>[]>();
  readonly #plusRoot = new TrieNode<T>();
  readonly #hashRoot = new TrieNode<T>();
  #size = 0;

  add(patternOrTopic: string, value: T, rule: MatchRule): void {
    const entry = { value, rule };
    const kind = kindOf(patternOrTopic);
    if (kind === "plain") {
      const list = this.#plain.get(patternOrTopic);
      if (list) list.push(entry);
      else this.#plain.set(patternOrTopic, [entry]);
    } else {
      let node = kind === "plus" ? this.#plusRoot : this.#hashRoot;
      for (const level of this.#path(patternOrTopic, kind)) {
        if (kind === "plus" && level === "+") {
          node.plus ??= new TrieNode<T>();
          node = node.plus;
        } else {
          let child = node.literal.get(level);
          if (!child) {
            child = new TrieNode<T>();
            node.literal.set(level, child);
          }
          node = child;
        }
      }
      node.here.push(entry);
    }
    this.#size++;
  }

  /** Removes one (pattern, value) entry; true when it was there. Values compare with ===. */
  remove(patternOrTopic: string, value: T): boolean {
    const kind = kindOf(patternOrTopic);
    if (kind === "plain") {
      const list = this.#plain.get(patternOrTopic);
      if (!list || !removeFirst(list, value)) return false;
      if (list.length === 0) this.#plain.delete(patternOrTopic);
      this.#size--;
      return true;
    }
    // Remember the way down so emptied nodes can be pruned on the way back up.
    const trail: { parent: TrieNode<T>; level: string; isPlus: boolean }[] = [];
    let node: TrieNode<T> = kind === "plus" ? this.#plusRoot : this.#hashRoot;
    for (const level of this.#path(patternOrTopic, kind)) {
      const isPlus = kind === "plus" && level === "+";
      const next: TrieNode<T> | undefined = isPlus ? node.plus : node.literal.get(level);
      if (!next) return false;
      trail.push({ parent: node, level, isPlus });
      node = next;
    }
    if (!removeFirst(node.here, value)) return false;
    for (let i = trail.length - 1; i >= 0 && node.isEmpty(); i--) {
      const step = trail[i] as (typeof trail)[number];
      if (step.isPlus) step.parent.plus = undefined;
      else step.parent.literal.delete(step.level);
      node = step.parent;
    }
    this.#size--;
    return true;
  }

  /** Every value whose pattern matches the topic, each value at most once per entry. */
  match(topic: string): T[] {
    const out: T[] = [];
    for (const entry of this.#plain.get(topic) ?? []) out.push(entry.value);
    const levels = splitLevels(topic);
    this.#matchPlus(levels, out);
    this.#matchHash(levels, out);
    return out;
  }

  get size(): number {
    return this.#size;
  }

  /** The trie path: all levels of a "+" pattern; the levels before the final "#" of a "#" pattern. */
  #path(pattern: string, kind: "plus" | "hash"): string[] {
    const levels = splitLevels(pattern);
    return kind === "plus" ? levels : levels.slice(0, -1);
  }

  #matchPlus(levels: readonly string[], out: T[]): void {
    // Iterative depth-first walk: at most two branches per level, and only along existing nodes.
    const stack: { node: TrieNode<T>; depth: number }[] = [{ node: this.#plusRoot, depth: 0 }];
    for (let item = stack.pop(); item; item = stack.pop()) {
      const { node, depth } = item;
      if (depth === levels.length) {
        for (const entry of node.here) out.push(entry.value);
        continue;
      }
      const level = levels[depth] as string;
      const child = node.literal.get(level);
      if (child) stack.push({ node: child, depth: depth + 1 });
      if (node.plus) stack.push({ node: node.plus, depth: depth + 1 });
    }
  }

  #matchHash(levels: readonly string[], out: T[]): void {
    // A node at depth d holds patterns of d + 1 levels whose prefix equals the topic's first d.
    // M needs d + 1 <= levels; E allows d + 1 = levels + 1 (the "#" standing for zero levels).
    let node: TrieNode<T> | undefined = this.#hashRoot;
    for (let depth = 0; node; depth++) {
      for (const entry of node.here) {
        if (entry.rule === "E" || depth < levels.length) out.push(entry.value);
      }
      if (depth >= levels.length) break;
      node = node.literal.get(levels[depth] as string);
    }
  }
}

function removeFirst<T>(list: Entry<T>[], value: T): boolean {
  const i = list.findIndex((e) => e.value === value);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}
