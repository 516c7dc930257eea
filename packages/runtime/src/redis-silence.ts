import type { Logger } from "@evb/domain";

/** What the watch needs of an ioredis connection. */
export interface WatchedRedis {
  readonly status: string;
  ping(): Promise<unknown>;
  /** ioredis: closes the socket; with `true`, connects again at once (its retry strategy). */
  disconnect(reconnect?: boolean): void;
  once(event: "end", listener: () => void): unknown;
}

/** How often a ready connection is pinged, and how long the answer may take (ms). */
export const SILENCE_LIMIT_MS = 1_000;

/**
 * Replaces the socket of a connection whose Redis went silent (no RST, no FIN: its host lost its
 * link). ioredis fails each command at its timeout but keeps writing to the same socket, whose
 * unanswered bytes the kernel retransmits ever more rarely: after a 25 s outage the first one to
 * get through came 1.4-1.9 s after the link healed on the multi-host bed (the indexers'
 * heartbeats, so the gateways' readiness waited for them). Here a PING is sent every
 * `limitMs` while the connection is ready; one unanswered for `limitMs` closes the socket and
 * connects again, and a fresh connection's attempts get through as soon as the network does.
 * A Redis merely slow for over a second costs a reconnect (the commands then in flight fail, as
 * at their timeout), never a wrong answer. Ends when the connection ends for good.
 */
export function replaceWhenSilent(redis: WatchedRedis, logger: Logger, limitMs = SILENCE_LIMIT_MS): { stop(): void } {
  let waiting: NodeJS.Timeout | undefined;
  // A PING dropped with the socket may never settle: each look has its own token.
  let look = 0;
  const lookNow = () => {
    if (waiting !== undefined || redis.status !== "ready") return;
    const mine = ++look;
    const done = () => {
      if (mine !== look) return;
      clearTimeout(waiting);
      waiting = undefined;
    };
    waiting = setTimeout(() => {
      logger.warn({ limitMs }, "Redis did not answer a PING; replacing the connection");
      look++;
      waiting = undefined;
      redis.disconnect(true);
    }, limitMs);
    redis.ping().then(done, done);
  };
  const timer = setInterval(lookNow, limitMs);
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    clearTimeout(waiting);
  };
  redis.once("end", stop);
  return { stop };
}
