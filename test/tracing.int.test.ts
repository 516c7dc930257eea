import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTraceparent } from "@evb/telemetry";
import { mqttWsUrl, openClient } from "./mqtt/raw-mqtt.ts";
import { OtlpReceiver, type ReceivedSpan } from "./support/otlp-receiver.ts";
import { Receiver } from "./support/receiver.ts";
import { frame, RawStomp, stompUrl } from "./support/stomp.ts";
import { TestSystem } from "./support/system.ts";
import { admin, M, openTopic, publish, subscribe } from "./subscriptions/helpers.ts";

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
        ALERT_POLL_MS: "100",
      },
    });
  });
  afterAll(async () => {
    await sys?.stop();
    await callbacks?.close();
    await otlp?.close();
  });

  it("background loops (readiness looks, heartbeats, polls) start no traces: no database query or Redis command is a root", async () => {
    // The services have been up, looking at Postgres and Redis every 0.25 s, for a while by now.
    await new Promise((r) => setTimeout(r, 1_500));
    const strayRoots = roots(otlp.spans).filter((s) => /instrumentation-(pg|ioredis)/.test(s.scope));
    expect(strayRoots.map((s) => `${s.service} ${s.name}`)).toEqual([]);
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
    // Regression: the server span was named "POST" alone; it is named by the route it served.
    expect(root?.name).toMatch(/^(GET|POST) \/event-m\/rest\/publish$/);
    // Lines logged inside the trace carry its ids (regression: none did with tracing on).
    const traced = (name: string) =>
      readFileSync(sys.logFileOf(name), "utf8")
        .split("\n")
        .filter((l) => l.startsWith("{") && l.includes(traceId))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await expect.poll(() => [...traced("gateway-1"), ...traced("indexer-1")].length, { timeout: 10_000 }).toBeGreaterThan(0);
    for (const line of [...traced("gateway-1"), ...traced("indexer-1")]) {
      expect(line.trace_id).toBe(traceId);
      expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
    }
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

  it("an alert to the owner carries a traceparent: its `alert send` span is a child of the callback attempt that raised it", async () => {
    const gone = await Receiver.start();
    const alerts = await Receiver.start();
    try {
      gone.answer = () => ({ status: 410 });
      const subscriptionId = await subscribe(sys.gatewayUrl, { topic: "traced", url: gone.url() });
      const set = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId, alertUrl: alerts.url() })) as { code: number };
      expect(set.code).toBe(0);
      await publish(sys.gatewayUrl, "traced", "gone");
      await alerts.until(() => alerts.requests.length >= 1, "the suspended alert");
      expect(JSON.parse(alerts.requests[0]?.body ?? "{}")).toMatchObject({ type: "subscription.suspended" });
      const failed = parseTraceparent(String(gone.requests[0]?.headers.traceparent ?? ""));
      const sent = parseTraceparent(String(alerts.requests[0]?.headers.traceparent ?? ""));
      expect(failed, "the failed callback's traceparent").toBeDefined();
      expect(sent?.traceId, "the alert is in the failed callback's trace").toBe(failed?.traceId);

      const traceId = sent?.traceId as string;
      const alertSend = () => otlp.trace(traceId).find((s) => s.service === "evb-notifier" && s.name === "alert send");
      await expect.poll(() => alertSend() !== undefined, { timeout: 15_000, interval: 200 }).toBe(true);
      const exported = (spanId?: string) => otlp.trace(traceId).some((s) => s.spanId === spanId);
      await expect.poll(() => exported(sent?.spanId) && exported(failed?.spanId), { timeout: 15_000, interval: 200 }).toBe(true);
      const spans = otlp.trace(traceId);
      // The failed callback's POST names its HTTP client span, a child of its `callback attempt`.
      const failedPost = spans.find((s) => s.spanId === failed?.spanId) as ReceivedSpan;
      const attempt = spans.find((s) => s.spanId === failedPost.parentSpanId) as ReceivedSpan;
      expect(attempt.name).toBe("callback attempt");
      expect(alertSend()?.parentSpanId).toBe(attempt.spanId);
      // The alert's POST names its HTTP client span, a child of `alert send`.
      expect(spans.find((s) => s.spanId === sent?.spanId)?.parentSpanId).toBe(alertSend()?.spanId);
      expect(roots(spans)).toHaveLength(1);
    } finally {
      await gone.close();
      await alerts.close();
    }
  });

  /** A client's span, as a STOMP or MQTT client with tracing of its own would send it. */
  const clientSpan = () => ({ traceId: randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex") });
  /** The trace a client started reaches the notifier's callback attempt, and is connected: its one root is the gateway's publish span, a child of the client's span. */
  const expectContinued = async (client: { traceId: string; spanId: string }) => {
    const wanted = (spans: ReceivedSpan[]) => ({
      producer: spans.some((s) => s.service === "evb-gateway" && s.kind === PRODUCER && s.parentSpanId === client.spanId),
      sealRecord: spans.some((s) => s.service === "evb-indexer" && s.name === "seal record"),
      attempt: spans.some((s) => s.service === "evb-notifier" && s.name === "callback attempt"),
    });
    await expect
      .poll(() => wanted(otlp.trace(client.traceId)), { timeout: 15_000, interval: 200 })
      .toEqual({
        producer: true,
        sealRecord: true,
        attempt: true,
      });
    const [root, ...others] = roots(otlp.trace(client.traceId));
    expect(others.map((s) => `${s.service} ${s.name}`)).toEqual([]);
    expect(root).toMatchObject({ service: "evb-gateway", kind: PRODUCER, parentSpanId: client.spanId });
  };

  it("a STOMP SEND with a traceparent header continues the client's trace through Kafka to the callback", async () => {
    await openTopic(sys.gatewayUrl, "traced-stomp");
    const subscriptionId = await subscribe(sys.gatewayUrl, { topic: "traced-stomp", url: callbacks.url() });
    const client = clientSpan();
    const stomp = await RawStomp.open(stompUrl(sys.gatewayUrl));
    try {
      expect((await stomp.connect()).command).toBe("CONNECTED");
      const n = stomp.frames.length;
      const traceparent = `00-${client.traceId}-${client.spanId}-01`;
      stomp.send(frame("SEND", { destination: "traced-stomp", receipt: "r1", traceparent, tracestate: "client=1" }, "over STOMP"));
      expect((await stomp.nth(n)).command).toBe("RECEIPT");
    } finally {
      stomp.close();
    }
    await callbacks.until(() => callbacks.deliveredIds(subscriptionId).length === 1, "the callback");
    await expectContinued(client);
  });

  it("an MQTT 5 PUBLISH with a traceparent user property continues the client's trace through Kafka to the callback", async () => {
    await openTopic(sys.gatewayUrl, "traced-mqtt");
    const subscriptionId = await subscribe(sys.gatewayUrl, { topic: "traced-mqtt", url: callbacks.url() });
    const client = clientSpan();
    const { client: mqtt } = await openClient(mqttWsUrl(sys.gatewayUrl), { protocolVersion: 5 });
    try {
      const traceparent = `00-${client.traceId}-${client.spanId}-01`;
      await mqtt.publishAsync("traced-mqtt", "over MQTT", { qos: 1, properties: { userProperties: { traceparent } } });
    } finally {
      await mqtt.endAsync(true);
    }
    await callbacks.until(() => callbacks.deliveredIds(subscriptionId).length === 1, "the callback");
    await expectContinued(client);
  });

  // Regression: every console page, script and style was a trace of its own.
  it("the console's files start no trace; the requests after them do", async () => {
    for (const path of ["/console/", "/console/config.json"]) expect((await fetch(`${sys.gatewayUrl}${path}`)).status).toBe(200);
    const marker = `console-marker-${randomBytes(3).toString("hex")}`;
    await fetch(`${sys.gatewayUrl}${M}/rest/state?topic=${marker}`, { headers: { "x-request-id": marker } });
    // Spans are exported in the order they end: once the later request's span is here, a span of
    // the console's requests would be too.
    const target = (s: ReceivedSpan) => s.attributes["url.path"] ?? s.attributes["http.target"] ?? "";
    await expect
      .poll(() => otlp.spans.some((s) => s.service === "evb-gateway" && s.kind === SERVER && target(s).startsWith(`${M}/rest/state`)), {
        timeout: 10_000,
      })
      .toBe(true);
    expect(otlp.spans.filter((s) => s.kind === SERVER && target(s).startsWith("/console")).map(target)).toEqual([]);
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
