import { BlockNudge, errorMessage, type Logger, parseHint, redisKeys, WakeMessage } from "@evb/domain";

/** The pub/sub port (an ioredis subscriber connection in main.ts). */
export interface HintSubscriber {
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  subscribe(...channels: string[]): Promise<unknown>;
}

/** What a "new block" nudge triggers: a dispatch run for the group (`Dispatcher`). */
interface DispatchNudge {
  nudge(groupId: string): void;
}

/** What a wake triggers: the subscriptions' delivery jobs (`DeliveryQueue`). */
interface DeliveryWake {
  wake(subscriptionIds: string[]): Promise<void>;
}

/** What the hints reach, each its own port. */
export interface HintTargets {
  dispatch: DispatchNudge;
  delivery: DeliveryWake;
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
      if (nudge) targets.dispatch.nudge(nudge.groupId);
      else logger.warn({ channel }, "ignored a malformed message");
    } else if (channel === wakeChannel) {
      const ids = parseHint(WakeMessage, message);
      if (ids) void targets.delivery.wake(ids).catch((err: Error) => logger.warn({ err: errorMessage(err) }, "wake failed"));
      else logger.warn({ channel }, "ignored a malformed message");
    }
  });
  await sub.subscribe(blocksChannel, wakeChannel);
}
