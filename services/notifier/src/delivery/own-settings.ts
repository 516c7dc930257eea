import {
  type BodyMode,
  type ContentFilter,
  callbackSpacingMs,
  parseContentFilter,
  customHeadersOf,
  parseSigningSecret,
  type SubscriptionSettings,
  signingSecretsAt,
} from "@evb/domain";
import type { DeliveryLimits } from "./delivery-step.ts";

/** A subscription's own settings (`SubscriptionSettingsStore` in production; absent: the deployment's for all). */
export interface SettingsSource {
  get(id: string): Promise<SubscriptionSettings>;
}

/** What a slice does differently for one subscription, from its settings (read from Postgres at each batch). */
export interface OwnSettings {
  /** Delivers nothing (the backlog and cursor are kept). */
  paused: boolean;
  /** The deployment's limits with the subscription's retry schedule and window in their place. */
  limits: DeliveryLimits;
  /** The keys that sign its callbacks, newest first; null: the deployment's (WEBHOOK_SECRETS). */
  keys: Buffer[] | null;
  /** Its custom headers (absent: none), sent with every callback under the broker's own. */
  headers?: Readonly<Record<string, string>>;
  /** "raw": the published content is the body (callback-payload.ts); absent: the envelope. */
  bodyMode?: BodyMode;
  /** Its content filter: events whose content it refuses are passed over without a callback; absent: none. */
  filter?: ContentFilter;
  /** Least time from one callback's start to the next's (ms); 0: no rate limit. */
  spacingMs: number;
}

/** How one subscription's callbacks are built: signed with `keys`, its headers beside, its body mode. */
export type CallbackShape = Pick<OwnSettings, "keys" | "headers" | "bodyMode">;

/** How its callbacks are signed and what headers they carry at `now` (a slice's and a test delivery's, pure). */
export function callbackShapeOf(s: SubscriptionSettings, now: number): CallbackShape {
  const shape: CallbackShape = { keys: signingSecretsAt(s, now)?.map(parseSigningSecret) ?? null };
  if (s.headers !== null) shape.headers = customHeadersOf(s.headers);
  if (s.bodyMode === "raw") shape.bodyMode = "raw";
  return shape;
}

/** The subscription's settings applied to the deployment's limits at `now` (pure). */
export function ownSettings(s: SubscriptionSettings, limits: DeliveryLimits, now: number): OwnSettings {
  const retry = {
    ...limits.retry,
    maxAttempts: s.retryMaxAttempts ?? limits.retry.maxAttempts,
    baseMs: s.retryBaseMs ?? limits.retry.baseMs,
    maxMs: s.retryMaxMs ?? limits.retry.maxMs,
  };
  const filter = s.filter === null ? null : parseContentFilter(s.filter);
  return {
    ...(filter ? { filter } : {}),
    paused: s.paused,
    limits: { ...limits, retry, window: s.deliveryWindow ?? limits.window },
    ...callbackShapeOf(s, now),
    spacingMs: callbackSpacingMs(s.maxRate),
  };
}

/**
 * When each rate-limited subscription last started a callback in this process, so that its next
 * slice keeps the spacing too. Only one slice of a subscription runs at a time (its lease), so
 * across notifiers the spacing can only be shortened at the moment a job moves to another one.
 */
export class CallbackPacer {
  private readonly last = new Map<string, number>();

  /** How long `id` must wait before its next callback may start at `now` (ms). */
  waitMs(id: string, spacingMs: number, now: number): number {
    if (spacingMs <= 0) {
      this.last.delete(id);
      return 0;
    }
    const at = this.last.get(id);
    return at === undefined ? 0 : Math.max(0, at + spacingMs - now);
  }

  /**
   * Waits until `id`'s next callback may start: sleeps a wait up to `sleepMaxMs`, and answers
   * when the job should look again instead when the wait is longer (null: start now).
   */
  async pace(
    id: string,
    spacingMs: number,
    t: { now: () => number; sleep: (ms: number) => Promise<void>; sleepMaxMs: number },
  ): Promise<number | null> {
    const wait = this.waitMs(id, spacingMs, t.now());
    if (wait > t.sleepMaxMs) return t.now() + wait;
    if (wait > 0) await t.sleep(wait);
    return null;
  }

  started(id: string, spacingMs: number, at: number): void {
    if (spacingMs > 0) this.last.set(id, at);
  }
}
