import { BlockNudge, errorMessage, type Logger, parseHint, redisKeys, WakeMessage } from "@evb/domain";

/** The pub/sub port (an ioredis subscriber connection in main.ts). */
export interface HintSubscriber {
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  subscribe(...channels: string[]): Promise<unknown>;
}

/** What the hints trigger: a dispatch run for a group, delivery jobs for subscriptions. */
export interface HintTargets {
  nudge(groupId: string): void;
  wake(subscriptionIds: string[]): Promise<void>;
}

/**
 * Listens for the notifier's two hints: the indexer's "new block" nudge and the gateway's wake.
 * Each message is checked against its schema; a malformed one is logged and ignored (the poll
 * and the sweep find the work anyway, since the ledger is the truth).
 */
export async function listenForHints(sub: HintSubscriber, prefix: string, targets: HintTargets, logger: Logger): Promise<void> {
  const { blocksChannel, wakeChannel } = redisKeys(prefix);
  sub.on("message", (channel: string, message: string) => {
    if (channel === blocksChannel) {
      const nudge = parseHint(BlockNudge, message);
      if (nudge) targets.nudge(nudge.groupId);
      else logger.warn({ channel }, "ignored a malformed message");
    } else if (channel === wakeChannel) {
      const ids = parseHint(WakeMessage, message);
      if (ids) void targets.wake(ids).catch((err: Error) => logger.warn({ err: errorMessage(err) }, "wake failed"));
      else logger.warn({ channel }, "ignored a malformed message");
    }
  });
  await sub.subscribe(blocksChannel, wakeChannel);
}
