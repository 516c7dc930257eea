import { type BodyMode, type ContentFilter, type MatchRule, matchesContentFilter } from "@evb/domain";
import type { BacklogItem } from "@evb/storage";
import { type CallbackPoster, type CallbackSigner, type Flight, startFlight } from "./callback-flight.ts";
import type { PostResult } from "./callback-transport.ts";

/** The answer to one callback, taken from the window in the order the callbacks were sent. */
export interface Answer {
  item: BacklogItem;
  startedAt: number;
  result: PostResult;
  /** How long the attempt took. */
  ms: number;
}

/** Where a window's callbacks go, and the keys that sign them (null: the deployment's). */
interface Destination {
  id: string;
  url: string;
  variant: MatchRule;
  signal?: AbortSignal;
  keys?: readonly Buffer[] | null;
  /** The subscription's custom headers. */
  headers?: Readonly<Record<string, string>>;
  bodyMode?: BodyMode;
  /** The content filter: an event it refuses is answered at once as delivered without a request (`skipped`). */
  filter?: ContentFilter;
}

/** The answer of an event the content filter passed over: done, with nothing sent. */
const SKIPPED: PostResult = { delivered: true, status: 0, excerpt: null, skipped: true };

/**
 * The callbacks of one subscription in flight at once (up to DELIVERY_WINDOW). Each is sent only
 * after the previous one's request was written, so they reach the receiver in event order, and
 * their answers are handed out in that order too, whichever comes back first.
 */
export class DeliveryWindow {
  private readonly flights: Flight[] = [];
  private readonly poster: { transport: CallbackPoster; signer: CallbackSigner };
  private readonly now: () => number;
  private readonly to: Destination;

  constructor(poster: { transport: CallbackPoster; signer: CallbackSigner }, now: () => number, to: Destination) {
    this.poster = poster;
    this.now = now;
    this.to = to;
  }

  /** Callbacks sent and not yet taken by `answer()`. */
  get inFlight(): number {
    return this.flights.length;
  }

  /**
   * Sends `item` once the previous request is written and `ready` (the lease check) has passed.
   * An event the content filter refuses takes its place in order without a request; false then.
   */
  async send(item: BacklogItem, ready: () => Promise<void>): Promise<boolean> {
    const last = this.flights.at(-1);
    if (last) await last.written;
    await ready();
    if (this.to.filter && !matchesContentFilter(this.to.filter, item.content)) {
      const startedAt = this.now();
      const result = Promise.resolve({ result: SKIPPED, endedAt: startedAt });
      this.flights.push({ item, startedAt, written: Promise.resolve(), result });
      return false;
    }
    this.flights.push(startFlight(this.poster, this.now, { ...this.to, item }));
    return true;
  }

  /** The answer to the oldest callback in flight; null when none is. */
  async answer(): Promise<Answer | null> {
    const flight = this.flights.shift();
    if (!flight) return null;
    const { result, endedAt } = await flight.result;
    return { item: flight.item, startedAt: flight.startedAt, result, ms: endedAt - flight.startedAt };
  }

  /**
   * Callbacks still in flight when the slice stops judging answers: their answers no longer
   * count (a later event's 2xx after a failed one is not recorded), but the slice waits for them,
   * so none outlives the lease or overlaps the next slice's sends.
   */
  async settle(): Promise<void> {
    await Promise.allSettled(this.flights.splice(0).map((f) => f.result));
  }
}

/** The window each subscription reached (only those above 1), so its next slice starts where the last left off. */
export class WindowSizes {
  private readonly sizes = new Map<string, number>();

  of(id: string): number {
    return this.sizes.get(id) ?? 1;
  }

  keep(id: string, window: number): void {
    if (window > 1) this.sizes.set(id, window);
    else this.sizes.delete(id);
  }
}
