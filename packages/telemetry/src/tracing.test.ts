import { trace } from "@opentelemetry/api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type InMemoryTracing, inMemoryTracing } from "../../../test/support/in-memory-tracing.ts";
import { parseTraceparent } from "./traceparent.ts";
import { addLinks, endSpan, MAX_LINKS, startSpan, traceparentOf, tracingOn, withSpan } from "./tracing.ts";

const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const tp = (i: number) => `00-${i.toString(16).padStart(32, "a")}-${i.toString(16).padStart(16, "b")}-01`;

describe("tracing off", () => {
  it("makes no span and runs the work as is", () => {
    expect(tracingOn()).toBe(false);
    expect(startSpan("x", { parent: PARENT })).toBeUndefined();
    expect(withSpan(undefined, () => 42)).toBe(42);
    endSpan(undefined, new Error("nothing to end"));
  });
});

describe("tracing on", () => {
  let tracing: InMemoryTracing;
  const finished = () => tracing.spans();

  beforeAll(() => {
    tracing = inMemoryTracing();
  });
  afterAll(() => tracing.stop());
  beforeEach(() => tracing.reset());

  it("keeps the tracestate sent with a parent, and ignores one without a valid parent", () => {
    endSpan(startSpan("publish", { parent: PARENT, tracestate: "vendor=abc,other=1" }));
    endSpan(startSpan("publish", { parent: "garbage", tracestate: "vendor=abc" }));
    const [child, root] = finished();
    expect(child?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(child?.spanContext().traceState?.serialize()).toBe("vendor=abc,other=1");
    expect(root?.parentSpanContext).toBeUndefined();
    expect(root?.spanContext().traceState).toBeUndefined();
  });

  it("continues the trace of a carried traceparent, and writes its own", () => {
    const span = startSpan("seal record", { parent: PARENT });
    expect(span).toBeDefined();
    endSpan(span);
    const [done] = finished();
    expect(done?.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(done?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    const written = parseTraceparent(traceparentOf(span as NonNullable<typeof span>));
    expect(written).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: done?.spanContext().spanId, traceFlags: 1 });
  });

  it("a malformed parent leaves the span a child of the active one", () => {
    const outer = startSpan("outer");
    withSpan(outer, () => endSpan(startSpan("inner", { parent: "not-a-traceparent" })));
    endSpan(outer);
    const [inner, done] = finished();
    expect(inner?.parentSpanContext?.spanId).toBe(done?.spanContext().spanId);
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it("links once per distinct traceparent, skipping malformed ones, and adds links later", () => {
    const span = startSpan("seal 1", { links: [PARENT, PARENT, "junk", undefined, null] });
    addLinks(span, [tp(1), tp(2)]);
    endSpan(span);
    const links = finished()[0]?.links ?? [];
    expect(links.map((l) => l.context.spanId)).toEqual(["00f067aa0ba902b7", "bbbbbbbbbbbbbbb1", "bbbbbbbbbbbbbbb2"]);
  });

  it("links at most MAX_LINKS records of a seal", () => {
    endSpan(startSpan("seal 1", { links: Array.from({ length: MAX_LINKS + 10 }, (_, i) => tp(i + 1)) }));
    const links = finished()[0]?.links ?? [];
    expect(links).toHaveLength(MAX_LINKS);
    expect(links[0]?.context.spanId).toBe("bbbbbbbbbbbbbbb1");
  });

  it("marks a failed span", () => {
    endSpan(startSpan("callback attempt"), new Error("HTTP 503"));
    const [done] = finished();
    expect(done?.status).toMatchObject({ code: 2, message: "HTTP 503" });
    expect(done?.events[0]?.name).toBe("exception");
  });
});
