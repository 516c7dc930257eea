import { TopicTrie } from "@evb/domain";
import { FilterTrie } from "../mqtt/filter-trie.ts";
import type { EventFilter } from "./subscribe-request.ts";

/** A ledger subscription as the gateway's block watch sees it (LedgerSubscription). */
export interface WatchedFeed {
  readonly filter: EventFilter;
  /**
   * Told once, as it is watched: the group's chain is known to reach `height` (-1: not known yet),
   * and every later block will be told (notify or pass), so it need not read the head itself.
   */
  heard(height: number): void;
  /** Blocks up to `height` may hold its events: read them. */
  notify(height: number): void;
  /** Blocks (from, to] hold none of its topics: move on without reading (or read, when behind). */
  pass(from: number, to: number): void;
}

/** One distinct (rule, item) of the live filters, with the feeds that hold it. */
interface Entry {
  feeds: Set<WatchedFeed>;
  /** The last round that collected this entry's feeds: each entry's feeds are gathered once a round. */
  round: number;
}

/**
 * The live filters of one group, indexed by distinct item: the broker's M-rule items in a
 * TopicTrie, MQTT filters in a FilterTrie, each distinct item once however many feeds hold it.
 * Which feeds a set of topics concerns costs about each topic's depth plus the distinct items it
 * meets, not the number of feeds or filters.
 */
export class FeedIndex {
  private readonly mRule = new TopicTrie<Entry>();
  private readonly mqtt = new FilterTrie<Entry>();
  private readonly entries = new Map<string, Entry>();

  add(feed: WatchedFeed): void {
    const { rule } = feed.filter;
    for (const item of new Set(feed.filter.items)) {
      const key = `${rule ?? "M"}\u0000${item}`;
      let entry = this.entries.get(key);
      if (!entry) {
        entry = { feeds: new Set(), round: 0 };
        this.entries.set(key, entry);
        if (rule === "mqtt") this.mqtt.add(item, entry);
        else this.mRule.add(item, entry, "M");
      }
      entry.feeds.add(feed);
    }
  }

  remove(feed: WatchedFeed): void {
    const { rule } = feed.filter;
    for (const item of new Set(feed.filter.items)) {
      const key = `${rule ?? "M"}\u0000${item}`;
      const entry = this.entries.get(key);
      if (!entry) continue;
      entry.feeds.delete(feed);
      if (entry.feeds.size > 0) continue;
      this.entries.delete(key);
      if (rule === "mqtt") this.mqtt.remove(item, entry);
      else this.mRule.remove(item, entry);
    }
  }

  /** Adds to `out` every feed an item of which takes one of `topics`; `round` numbers the gathering (a fresh one per block range). */
  collect(topics: readonly string[], round: number, out: Set<WatchedFeed>): void {
    for (const topic of topics) {
      for (const entry of this.mRule.match(topic)) gather(entry, round, out);
      for (const entry of this.mqtt.match(topic)) gather(entry, round, out);
    }
  }
}

function gather(entry: Entry, round: number, out: Set<WatchedFeed>): void {
  if (entry.round === round) return;
  entry.round = round;
  for (const f of entry.feeds) out.add(f);
}
