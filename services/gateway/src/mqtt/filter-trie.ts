/**
 * An index of MQTT topic filters (the rule of topic-filter.ts: levels split on `/` with empty
 * ones kept, `+` one level, `#` the rest including none, so `a/#` takes `a`; a wildcard first
 * level never takes a `$` topic) so that matching a topic costs about its depth and the filters
 * it meets, not the number of filters. The domain's TopicTrie keeps the broker's M/E rules
 * (Java's split, `#` literal inside a `+` pattern), which differ from MQTT's.
 */
class Node<T> {
  readonly literal = new Map<string, Node<T>>();
  plus: Node<T> | undefined;
  /** Filters ending here. */
  readonly here: T[] = [];
  /** Filters ending here with `#` (`a/#` sits in node `a`). */
  readonly hash: T[] = [];

  isEmpty(): boolean {
    return this.here.length === 0 && this.hash.length === 0 && this.literal.size === 0 && this.plus === undefined;
  }
}

export class FilterTrie<T> {
  readonly #root = new Node<T>();

  /** Adds a (checked) filter's value; the same pair twice is two entries. */
  add(filter: string, value: T): void {
    const { node, hash } = this.#walk(filter, true) as { node: Node<T>; hash: boolean };
    (hash ? node.hash : node.here).push(value);
  }

  /** Removes one entry of (filter, value); true when it was there. Emptied nodes are pruned. */
  remove(filter: string, value: T): boolean {
    const trail: Node<T>[] = [];
    const found = this.#walk(filter, false, trail);
    if (!found) return false;
    const list = found.hash ? found.node.hash : found.node.here;
    const i = list.indexOf(value);
    if (i < 0) return false;
    list.splice(i, 1);
    const levels = this.#levels(filter).levels;
    for (let d = trail.length - 1; d >= 1 && (trail[d] as Node<T>).isEmpty(); d--) {
      const parent = trail[d - 1] as Node<T>;
      const level = levels[d - 1] as string;
      if (level === "+") parent.plus = undefined;
      else parent.literal.delete(level);
    }
    return true;
  }

  /** Every value whose filter takes `topic` (a value added twice comes twice). */
  match(topic: string): T[] {
    const out: T[] = [];
    const levels = topic.split("/");
    const dollar = topic.startsWith("$");
    // Depth-first over the nodes the topic's levels lead to: a literal and a `+` branch per level at most.
    const stack: { node: Node<T>; depth: number }[] = [{ node: this.#root, depth: 0 }];
    for (let item = stack.pop(); item; item = stack.pop()) {
      const { node, depth } = item;
      if (depth > 0 || !dollar) for (const v of node.hash) out.push(v);
      if (depth === levels.length) {
        for (const v of node.here) out.push(v);
        continue;
      }
      const child = node.literal.get(levels[depth] as string);
      if (child) stack.push({ node: child, depth: depth + 1 });
      if (node.plus && (depth > 0 || !dollar)) stack.push({ node: node.plus, depth: depth + 1 });
    }
    return out;
  }

  #levels(filter: string): { levels: string[]; hash: boolean } {
    const levels = filter.split("/");
    const hash = levels.at(-1) === "#";
    return { levels: hash ? levels.slice(0, -1) : levels, hash };
  }

  /** The node a filter ends in (made on the way when `make`), with the nodes passed in `trail`. */
  #walk(filter: string, make: boolean, trail: Node<T>[] = []): { node: Node<T>; hash: boolean } | null {
    const { levels, hash } = this.#levels(filter);
    let node = this.#root;
    trail.push(node);
    for (const level of levels) {
      let next = level === "+" ? node.plus : node.literal.get(level);
      if (!next) {
        if (!make) return null;
        next = new Node<T>();
        if (level === "+") node.plus = next;
        else node.literal.set(level, next);
      }
      node = next;
      trail.push(node);
    }
    return { node, hash };
  }
}
