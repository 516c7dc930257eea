import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTraceparent } from "@evb/telemetry";
import { OtlpReceiver, type ReceivedSpan } from "./support/otlp-receiver.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";
import { openTopic, publish, subscribe } from "./subscriptions/helpers.ts";

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

/** Spans whose parent is not in the trace: one for a connected trace, its root. */
function roots(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => !ids.has(s.parentSpanId));
}

// Crash survived: none. What an operator sees with OTEL_EXPORTER_OTLP_ENDPOINT set: one trace per
// publish, from the gateway's HTTP request through the Kafka record, the indexer's seal and the
// notifier's dispatch to the callback attempt, whose POST carries that trace's traceparent.
describe("tracing (OpenTelemetry, OTLP/HTTP)", () => {
  let otlp: OtlpReceiver;
  let callbacks: Receiver;
  let sys: TestSystem;

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    callbacks = await Receiver.start();
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url(),
        OTEL_BSP_SCHEDULE_DELAY: "100",
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        NOTIFIER_POLL_MS: "200",
      },
    });
  });
  afterAll(async () => {
    await sys?.stop();
    await callbacks?.close();
    await otlp?.close();
  });

  it("one publish is one connected trace across gateway, indexer and notifier, and its callback carries the trace's traceparent", async () => {
    await openTopic(sys.gatewayUrl, "traced");
    const subscriptionId = await subscribe(sys.gatewayUrl, { topic: "traced", url: callbacks.url() });
    const eventId = await publish(sys.gatewayUrl, "traced", "hello, trace");
    await callbacks.until(() => callbacks.deliveredIds(subscriptionId).includes(eventId), "the callback");

    const callback = callbacks.requests.find((r) => r.status === 200);
    const sent = parseTraceparent(String(callback?.headers.traceparent ?? ""));
    expect(sent, `traceparent header ${String(callback?.headers.traceparent)}`).toBeDefined();
    const traceId = sent?.traceId as string;

    const wanted = (spans: ReceivedSpan[]) => ({
      gatewayServer: spans.some((s) => s.service === "evb-gateway" && s.kind === SERVER),
      producer: spans.some((s) => s.service === "evb-gateway" && s.kind === PRODUCER && s.name.startsWith("publish ")),
      sealRecord: spans.some((s) => s.service === "evb-indexer" && s.name === "seal record"),
      dispatch: spans.some((s) => s.service === "evb-notifier" && s.name === "dispatch event"),
      attempt: spans.some((s) => s.service === "evb-notifier" && s.name === "callback attempt"),
      httpClient: spans.some((s) => s.service === "evb-notifier" && s.kind === CLIENT && s.spanId === sent?.spanId),
    });
    const all = { gatewayServer: true, producer: true, sealRecord: true, dispatch: true, attempt: true, httpClient: true };
    await expect.poll(() => wanted(otlp.trace(traceId)), { timeout: 15_000, interval: 200 }).toEqual(all);

    const spans = otlp.trace(traceId);
    // Connected: every span's parent is in the trace but the root's, the gateway's HTTP request.
    const [root, ...others] = roots(spans);
    expect(others.map((s) => `${s.service} ${s.name}`)).toEqual([]);
    expect(root).toMatchObject({ service: "evb-gateway", kind: SERVER, parentSpanId: "" });
    // The seal covering the record links to the record's producer span.
    const producer = spans.find((s) => s.kind === PRODUCER) as ReceivedSpan;
    const seal = otlp.spans.find(
      (s) => s.service === "evb-indexer" && s.name === "seal 1" && s.links.some((l) => l.spanId === producer.spanId),
    );
    expect(seal, "a seal span linking to the producer span").toBeDefined();
    // The callback attempt continues the indexer's span for the record (stored with the event).
    const sealRecord = spans.find((s) => s.name === "seal record") as ReceivedSpan;
    expect(sealRecord.parentSpanId).toBe(producer.spanId);
    const attempt = spans.find((s) => s.name === "callback attempt") as ReceivedSpan;
    expect(attempt.parentSpanId).toBe(sealRecord.spanId);
  });

  it("Postgres and Redis calls are traced by their instrumentations", async () => {
    const wanted = ["@opentelemetry/instrumentation-pg", "@opentelemetry/instrumentation-ioredis"];
    const seen = () => wanted.filter((scope) => otlp.spans.some((s) => s.scope === scope));
    await expect.poll(seen, { timeout: 10_000, interval: 200 }).toEqual(wanted);
  });
});

describe("tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  let callbacks: Receiver;
  let sys: TestSystem;

  beforeAll(async () => {
    callbacks = await Receiver.start();
    sys = await TestSystem.start({ notifiers: 1, env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", NOTIFIER_POLL_MS: "200" } });
  });
  afterAll(async () => {
    await sys?.stop();
    await callbacks?.close();
  });

  it("a callback carries no traceparent", async () => {
    await openTopic(sys.gatewayUrl, "untraced");
    const subscriptionId = await subscribe(sys.gatewayUrl, { topic: "untraced", url: callbacks.url() });
    const eventId = await publish(sys.gatewayUrl, "untraced", "no trace");
    await callbacks.until(() => callbacks.deliveredIds(subscriptionId).includes(eventId), "the callback");
    expect(callbacks.requests.map((r) => r.headers.traceparent)).toEqual([undefined]);
  });
});
