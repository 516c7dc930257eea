import { parseTraceparent } from "@evb/telemetry";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type InMemoryTracing, inMemoryTracing } from "../../../../test/support/in-memory-tracing.ts";
import { tracedAttempt } from "./callback-trace.ts";

const SEALED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("tracedAttempt", () => {
  let tracing: InMemoryTracing;
  beforeAll(() => {
    tracing = inMemoryTracing();
  });
  afterAll(() => tracing.stop());
  beforeEach(() => tracing.reset());

  it("sends the attempt's traceparent, in the trace of the event's publish", async () => {
    let sent: Record<string, string> = {};
    await tracedAttempt("sub-1", { eventId: "e-1", traceparent: SEALED }, async (headers) => {
      sent = headers;
      return { delivered: true, status: 200, excerpt: null };
    });
    const [attempt] = tracing.spans();
    expect(attempt?.name).toBe("callback attempt");
    expect(attempt?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(parseTraceparent(sent.traceparent)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: attempt?.spanContext().spanId,
      traceFlags: 1,
    });
    expect(attempt?.attributes["http.response.status_code"]).toBe(200);
  });

  it("an event sealed without tracing starts a trace of its own; a failed attempt is marked", async () => {
    const r = await tracedAttempt("sub-1", { eventId: "e-2", traceparent: null }, async () => ({
      delivered: false,
      failure: "SERVER_ERROR",
      status: 503,
      retryAfter: undefined,
      error: "HTTP 503",
      excerpt: null,
    }));
    expect(r.delivered).toBe(false);
    const [attempt] = tracing.spans();
    expect(attempt?.parentSpanContext).toBeUndefined();
    expect(attempt?.status).toMatchObject({ code: 2, message: "HTTP 503" });
  });
});
