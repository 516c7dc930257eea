import { expect, it } from "vitest";
import { logTopicName, silentLogger } from "@evb/domain";
import { createKafka, LogInspector } from "@evb/eventlog";
import { expectJson200 } from "../support/broker-expect.ts";
import { expectBrokerError, type MountCase } from "./conformance-support.ts";
import type { World } from "./world.ts";

/** Every operation that takes a groupId, with otherwise valid parameters, per variant that has it. */
const GROUP_AWARE: [string, Record<string, string>, readonly string[]][] = [
  ["rest/open", { topic: "seed.one" }, ["L", "M", "E"]],
  ["rest/close", { topic: "seed.one" }, ["L", "M", "E"]],
  ["rest/exist", { topic: "seed.one" }, ["L", "M", "E"]],
  ["rest/state", { topic: "seed.one" }, ["L", "M", "E"]],
  ["rest/list", { pageIndex: "0", pageSize: "10" }, ["L", "M", "E"]],
  ["rest/publish", { topic: "seed.one", content: "x" }, ["L", "M", "E"]],
  ["rest/getEvent", { eventId: "abcdefgh-1-1" }, ["L", "M", "E"]],
  ["admin/group/general", {}, ["L", "M", "E"]],
  ["admin/transaction/transList", { pageNumber: "1", pageSize: "1" }, ["L", "M", "E"]],
  ["admin/block/blockList", { pageNumber: "1", pageSize: "1" }, ["L", "M", "E"]],
  ["admin/node/nodeList", { pageNumber: "1", pageSize: "1" }, ["L", "M", "E"]],
  ["admin/validateGroupId", {}, ["L"]],
  ["admin/getContractContext", {}, ["L"]],
];

/** groupId is honoured everywhere: an unknown group never falls back to group 1. */
export function groupRoutingScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  it("every group-aware operation answers 200211 for an unknown group", async () => {
    for (const [op, params, variants] of GROUP_AWARE) {
      if (!variants.includes(v)) continue;
      const r = await w().ctx.call(m, op, { ...params, groupId: "3" }, "POST");
      expectBrokerError(r, v, 200211, "unknown group id");
    }
  });
}

/** Checked once: the group decides the Kafka log topic a publish is appended to. */
export function groupLogScenarios(w: () => World): void {
  it("a publish in group 2 is appended to group 2's log topic and leaves group 1's untouched", async () => {
    const { sys, ctx } = w();
    const kafka = createKafka({
      brokers: (sys.env.KAFKA_BROKERS as string).split(","),
      clientId: "conformance-offsets",
      logger: silentLogger,
    });
    const inspector = new LogInspector({ kafka });
    try {
      const ends = async (groupId: string) => {
        const offsets = await inspector.offsets(logTopicName(sys.env.KAFKA_TOPIC_PREFIX as string, groupId));
        return offsets.reduce((sum, p) => sum + p.high, 0);
      };
      const before = { one: await ends("1"), two: await ends("2") };
      const pub = await ctx.call(
        { variant: "L", context: "/event-broker" },
        "rest/publish",
        { topic: "seed.two", groupId: "2", content: "routed" },
        "POST",
      );
      expect(expectJson200(pub)).toMatchObject({ status: "SUCCESS" });
      expect({ one: await ends("1"), two: await ends("2") }).toEqual({ one: before.one, two: before.two + 1 });
    } finally {
      await inspector.close();
    }
  });
}
