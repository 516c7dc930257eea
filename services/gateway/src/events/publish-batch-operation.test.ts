import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { decodeLogRecord, type Receipt, silentLogger, type Variant } from "@evb/domain";
import { LogBackpressureError } from "@evb/eventlog";
import type { OperationContext } from "../http/operation.ts";
import { Params } from "../http/params.ts";
import { publishBatchOperation } from "./publish-batch-operation.ts";
import { EventPublisher, type PublishDeps } from "./publish-operation.ts";

/**
 * A publish path in memory: topics `t` and `u` exist in group 1 (`broken` fails its lookup like
 * storage down); the log keeps the appends (content `refused` fails as Kafka refusing it); the
 * receipt of a content starting with `late` never comes (a TIMEOUT), every other is sealed at once.
 */
function fakeDeps(): { deps: PublishDeps; appended: string[] } {
  const appended: string[] = [];
  const contents = new Map<string, string>();
  const deps: PublishDeps = {
    topics: {
      async exists(group, topic) {
        if (topic === "broken") throw new Error("connection refused");
        return group === "1" && (topic === "t" || topic === "u");
      },
    },
    groups: new Set(["1"]),
    log: {
      async append(_topic, _key, value) {
        const decoded = decodeLogRecord(value);
        if (!decoded.ok) throw new Error(decoded.error);
        const record = decoded.record;
        appended.push(record.content);
        contents.set(record.requestId, record.content);
        if (record.content === "refused") throw new LogBackpressureError(1);
      },
    },
    receipts: {
      expect(requestId) {
        const receipt = new Promise<Receipt | null>((resolve) =>
          setImmediate(() => {
            const content = contents.get(requestId) ?? "";
            resolve(content.startsWith("late") ? null : { requestId, eventId: `id-${content}`, height: 1 });
          }),
        );
        return { receipt, cancel: () => {} };
      },
    },
    gatewayId: "gw",
    kafkaTopicPrefix: "evb.",
    publishTimeoutMs: 1000,
    now: Date.now,
    logger: silentLogger,
  };
  return { deps, appended };
}

function ctx(variant: Variant, json: unknown): OperationContext {
  return {
    variant,
    params: new Params(new Map(), variant, undefined, json),
    req: { headers: {} } as Request,
    remoteIp: "127.0.0.1",
    caller: { address: "127.0.0.1", keyId: null },
  };
}

async function run(variant: Variant, events: unknown[]) {
  const { deps, appended } = fakeDeps();
  const reply = await publishBatchOperation(deps, new EventPublisher(deps)).handle(ctx(variant, { events }));
  return { results: (reply as { body: unknown[] }).body, appended };
}

describe("rest/publishBatch", () => {
  it("appends in the body's order and answers each event as rest/publish would, in order", async () => {
    const events = [
      { topic: "t", content: "a" },
      { topic: "nope", content: "x" },
      { topic: "u", content: "b" },
      { topic: "t", content: "late-1" },
      { topic: "t", content: "refused" },
      { topic: "broken", content: "y" },
      { topic: "t", content: "c" },
    ];
    const l = await run("L", events);
    expect(l.appended).toEqual(["a", "b", "late-1", "refused", "c"]);
    expect(l.results).toEqual([
      { status: "SUCCESS", topic: "t", eventId: "id-a" },
      { code: 100101, message: "topic not exist" },
      { status: "SUCCESS", topic: "u", eventId: "id-b" },
      { status: "TIMEOUT", topic: "t", eventId: null },
      { status: "ERROR", topic: "t", eventId: null },
      { code: 200000, message: "service unavailable" },
      { status: "SUCCESS", topic: "t", eventId: "id-c" },
    ]);
    // E answers 200202 where L and M answer TIMEOUT or ERROR, and for storage failures.
    const e = await run("E", events);
    const failed = { code: 200202, message: "the transaction does not correctly executed." };
    expect(e.results.slice(3, 6)).toEqual([failed, failed, failed]);
  });

  it("refuses a batch whole for its shape, its group and a batch-wide Idempotency-Key", async () => {
    const { deps } = fakeDeps();
    const op = publishBatchOperation(deps, new EventPublisher(deps));
    await expect(op.handle(ctx("L", { events: [] }))).rejects.toMatchObject({ code: 100212 });
    await expect(op.handle(ctx("L", undefined))).rejects.toMatchObject({ code: 100212 });
    const grouped = ctx("M", { events: [{ topic: "t", content: "a" }] });
    grouped.params.raw.set("groupId", ["2"]);
    await expect(op.handle(grouped)).rejects.toMatchObject({ code: 200211 });
    const keyed = {
      ...ctx("L", { events: [{ topic: "t", content: "a" }] }),
      req: { headers: { "idempotency-key": "k" } } as unknown as Request,
    };
    await expect(op.handle(keyed)).rejects.toMatchObject({ code: 100210 });
  });
});
