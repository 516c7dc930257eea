import type { ApiKeyRecord } from "@evb/storage";
import { ownerId } from "../http/caller-address.ts";

export interface CallerLimits {
  /** MAX_SUBSCRIPTIONS_PER_CALLER: live STOMP subscriptions and MQTT filters one caller may hold on this gateway. */
  subscriptions: number;
  /** MAX_TOPIC_FILTERS_PER_CALLER: the topics and patterns in them (a STOMP list counts each item). */
  filters: number;
}

/** Who holds a live subscription: its API key, or the caller's address when there is none (open mode, Basic users). */
export function subscriberOf(key: ApiKeyRecord | null, address: string): string {
  return ownerId({ address, keyId: key?.id ?? null });
}

/**
 * What each caller holds in live subscriptions on this gateway, over all its STOMP and MQTT
 * connections (per-connection caps alone let one caller open many connections). Pure counting:
 * `take` before a subscription starts, `give` back when it ends.
 */
export class CallerQuota {
  private readonly limits: CallerLimits;
  private readonly held = new Map<string, { subscriptions: number; filters: number }>();

  constructor(limits: CallerLimits) {
    this.limits = limits;
  }

  /** Takes one subscription of `filters` filters for `caller`; false, taking nothing, when it would pass either cap. */
  take(caller: string, filters: number): boolean {
    const h = this.held.get(caller) ?? { subscriptions: 0, filters: 0 };
    if (h.subscriptions + 1 > this.limits.subscriptions || h.filters + filters > this.limits.filters) return false;
    h.subscriptions++;
    h.filters += filters;
    this.held.set(caller, h);
    return true;
  }

  give(caller: string, filters: number): void {
    const h = this.held.get(caller);
    if (!h) return;
    h.subscriptions--;
    h.filters -= filters;
    if (h.subscriptions <= 0) this.held.delete(caller);
  }
}
