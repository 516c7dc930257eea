import { TopicTrie } from "@evb/domain";
import type { SubscriptionChange } from "@evb/storage";
import type { DispatchIndex } from "./ledger-dispatch.ts";

/**
 * One group's subscriptions as the dispatcher matches them: a topic trie (matching costs about
 * the topic's depth, whatever the number of subscriptions) plus each subscription's start
 * height, so a subscription never receives events sealed before it was taken. Kept current by
 * the changes the store hands over under the group's dispatch lock.
 */
export class SubscriptionIndex implements DispatchIndex {
  private rev = 0;
  private trie = new TopicTrie<string>();
  private readonly subs = new Map<string, SubscriptionChange>();
  private ledgerId: string | null = null;

  get ledger(): string | null {
    return this.ledgerId;
  }

  reset(ledger: string): void {
    this.rev = 0;
    this.trie = new TopicTrie<string>();
    this.subs.clear();
    this.ledgerId = ledger;
  }

  get revision(): number {
    return this.rev;
  }

  get size(): number {
    return this.subs.size;
  }

  apply(changes: readonly SubscriptionChange[]): void {
    for (const c of changes) {
      const old = this.subs.get(c.id);
      if (old) {
        this.trie.remove(old.topic, c.id);
        this.subs.delete(c.id);
      }
      if (c.active) {
        this.subs.set(c.id, c);
        this.trie.add(c.topic, c.id, c.matchRule);
      }
      if (c.revision > this.rev) this.rev = c.revision;
    }
  }

  match(topic: string, height: number): string[] {
    const out: string[] = [];
    for (const id of this.trie.match(topic)) {
      const s = this.subs.get(id);
      if (s && height > s.startHeight) out.push(id);
    }
    return out;
  }
}
