import { describe, expect, it } from "vitest";
import { type Logger, redisKeys } from "@evb/domain";
import { type HintSubscriber, listenForHints } from "./hint-listener.ts";

const PREFIX = "evb-t";
const keys = redisKeys(PREFIX);

class FakeSubscriber implements HintSubscriber {
  channels: string[] = [];
  listener: ((channel: string, message: string) => void) | undefined;
  on(_event: "message", listener: (channel: string, message: string) => void): this {
    this.listener = listener;
    return this;
  }
  async subscribe(...channels: string[]): Promise<void> {
    this.channels.push(...channels);
  }
}

async function setup() {
  const sub = new FakeSubscriber();
  const nudged: string[] = [];
  const woken: string[][] = [];
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (_o, msg) => void warnings.push(msg ?? "") };
  await listenForHints(
    sub,
    PREFIX,
    {
      dispatch: { nudge: (g) => void nudged.push(g) },
      delivery: {
        wake: async (ids) => {
          woken.push(ids);
          if (ids.includes("boom")) throw new Error("redis down");
        },
      },
    },
    logger,
  );
  const send = (channel: string, message: string) => sub.listener?.(channel, message);
  return { sub, nudged, woken, warnings, send };
}

describe("listenForHints", () => {
  it("subscribes to the blocks and wake channels under the prefix", async () => {
    const { sub } = await setup();
    expect(sub.channels).toEqual([keys.blocksChannel, keys.wakeChannel]);
  });

  it("a block nudge runs its group's dispatch; a wake starts the subscriptions' delivery", async () => {
    const { nudged, woken, send, warnings } = await setup();
    send(keys.blocksChannel, JSON.stringify({ groupId: "2", height: 9 }));
    send(keys.wakeChannel, JSON.stringify(["a", "b"]));
    expect(nudged).toEqual(["2"]);
    expect(woken).toEqual([["a", "b"]]);
    expect(warnings).toEqual([]);
  });

  it.each([
    { channel: keys.blocksChannel, message: "not json" },
    { channel: keys.blocksChannel, message: '{"groupId":2,"height":9}' },
    { channel: keys.wakeChannel, message: '{"ids":["a"]}' },
  ])("a malformed message on $channel is logged and ignored: $message", async ({ channel, message }) => {
    const { nudged, woken, send, warnings } = await setup();
    send(channel, message);
    expect(nudged).toEqual([]);
    expect(woken).toEqual([]);
    expect(warnings).toEqual(["ignored a malformed message"]);
  });

  it("a failing wake is logged, not thrown out of the message handler", async () => {
    const { send, warnings } = await setup();
    send(keys.wakeChannel, JSON.stringify(["boom"]));
    await new Promise((r) => setImmediate(r));
    expect(warnings).toEqual(["wake failed"]);
  });

  it("messages on other channels are not its business", async () => {
    const { nudged, woken, send, warnings } = await setup();
    send(`${PREFIX}:elsewhere`, JSON.stringify({ groupId: "1", height: 1 }));
    expect([nudged, woken, warnings]).toEqual([[], [], []]);
  });
});
