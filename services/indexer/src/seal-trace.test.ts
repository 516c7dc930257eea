import type { LogRecord, PositionedRecord } from "@evb/domain";
import { parseTraceparent } from "@evb/telemetry";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type InMemoryTracing, inMemoryTracing } from "../../../test/support/in-memory-tracing.ts";
import { traceSeal } from "./seal-trace.ts";

const PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const record = { topic: "t" } as LogRecord;

describe("traceSeal", () => {
  let tracing: InMemoryTracing;
  beforeAll(() => {
    tracing = inMemoryTracing();
  });
  afterAll(() => tracing.stop());
  beforeEach(() => tracing.reset());

  it("links the seal to each record's producer span and gives each traced record a child span in its trace", () => {
    const records: PositionedRecord[] = [
      { partition: 0, offset: 7, record, traceparent: PRODUCER },
      { partition: 0, offset: 8, record },
    ];
    const trace = traceSeal("1", records);
    trace.end();

    const [child, seal] = tracing.spans();
    expect(seal?.name).toBe("seal 1");
    expect(seal?.links.map((l) => l.context.spanId)).toEqual(["00f067aa0ba902b7"]);
    expect(child?.name).toBe("seal record");
    expect(child?.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(child?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    // The ledger stores the child's traceparent, so the notifier continues from the indexer's span.
    expect(parseTraceparent(trace.records[0]?.traceparent)?.spanId).toBe(child?.spanContext().spanId);
    expect(trace.records[1]).toBe(records[1]);
  });

  it("a failed seal ends its spans as failed", () => {
    traceSeal("1", [{ partition: 0, offset: 1, record, traceparent: PRODUCER }]).end(new Error("fenced"));
    expect(tracing.spans().map((s) => s.status.code)).toEqual([2, 2]);
  });
});
