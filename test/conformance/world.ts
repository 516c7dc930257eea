import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { encodeLogRecord, logTopicName, silentLogger } from "@evb/domain";
import { createKafka, createLogWriter } from "@evb/eventlog";
import { call } from "../support/http.ts";
import { TestSystem } from "../support/system.ts";
import { type ConformanceContext, makeContext } from "./conformance-support.ts";
import { LedgerOracle } from "./ledger-oracle.ts";

/** Sealer indexes of the suite's two indexers: ≥ 10, so that `sealer` "0xa" differs from its decimal. */
export const SEALER_INDEXES = [10, 11] as const;

/** Everything the scenarios share: one system with groups 1 and 2, seeded once. */
export interface World {
  sys: TestSystem;
  ctx: ConformanceContext;
  oracle: LedgerOracle;
  /** A group-1 block that holds several transactions (they reached Kafka as one batch). */
  multiTxBlock: { height: number; txCount: number };
  /** A callback receiver on 127.0.0.1 that answers 200, for subscribe's connectivity check. */
  callbackUrl: string;
  receiver: Server;
}

const L = "/event-broker";

async function publishOk(base: string, topic: string, groupId: string, content: string): Promise<string> {
  const r = await call(base, `${L}/rest/publish`, { topic, groupId, content }, "POST");
  const body = r.json as { status?: string; eventId?: string };
  if (body.status !== "SUCCESS" || !body.eventId) throw new Error(`seed publish failed: ${r.text}`);
  return body.eventId;
}

/**
 * Writes `count` records of one topic to the group's log in one Kafka batch, the way a burst of
 * publishes arrives, and waits until the indexer has sealed them. One batch on one partition is
 * fetched whole, so they land in one block.
 */
async function sealOneBatch(sys: TestSystem, oracle: LedgerOracle, groupId: string, topic: string, count: number) {
  const kafka = createKafka({ brokers: (sys.env.KAFKA_BROKERS as string).split(","), clientId: "conformance-seed", logger: silentLogger });
  const writer = createLogWriter(kafka);
  try {
    const appends = Array.from({ length: count }, (_, i) =>
      writer.append(
        logTopicName(sys.env.KAFKA_TOPIC_PREFIX as string, groupId),
        topic,
        encodeLogRecord({
          v: 1,
          requestId: randomUUID(),
          gatewayId: "conformance-seed",
          groupId,
          topic,
          content: `batch ${i}`,
          extensions: {},
          sender: `0x${"5e".repeat(20)}`,
          publishedAt: Date.now(),
        }),
      ),
    );
    await Promise.all(appends);
  } finally {
    await writer.close();
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const heights = await oracle.heightsOfTopic(groupId, topic);
    const sealed = [...heights.values()].reduce((a, b) => a + b, 0);
    if (sealed === count) {
      const [height, txCount] = [...heights].sort((a, b) => b[1] - a[1])[0] as [number, number];
      return { height, txCount };
    }
    if (Date.now() > deadline) throw new Error(`only ${sealed} of ${count} batch records sealed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startWorld(): Promise<World> {
  const receiver = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;
  const sys = await TestSystem.start({
    indexers: 2,
    sealerIndexBase: SEALER_INDEXES[0],
    env: { GROUP_IDS: "1,2", CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8" },
  }).catch((err) => {
    receiver.close();
    throw err;
  });
  const oracle = new LedgerOracle(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string);
  const base = sys.gatewayUrl;
  for (const [topic, groupId] of [
    ["seed.one", "1"],
    ["seed.two", "2"],
    ["seed.other", "2"],
  ] as const) {
    await call(base, `${L}/rest/open`, { topic, groupId });
  }
  // Concurrent publishes to both groups, so their blocks are sealed interleaved.
  await Promise.all(
    Array.from({ length: 12 }, (_, i) => {
      const [topic, groupId] = i % 3 === 0 ? ["seed.one", "1"] : i % 3 === 1 ? ["seed.two", "2"] : ["seed.other", "2"];
      return publishOk(base, topic, groupId, `seed ${i}`);
    }),
  );
  const multiTxBlock = await sealOneBatch(sys, oracle, "1", "seed.batch", 5);
  // Keep group 1's latest block a one-transaction block after the batch, for the default transList.
  await publishOk(base, "seed.one", "1", "after the batch");
  return { sys, ctx: makeContext(() => base), oracle, multiTxBlock, callbackUrl, receiver };
}

export async function stopWorld(w: World | undefined): Promise<void> {
  await w?.oracle.close();
  await w?.sys.stop();
  w?.receiver.close();
}
