import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "./support/http.ts";
import { Receiver } from "./support/receiver.ts";
import { Scrape } from "./support/scrape.ts";
import { TestSystem } from "./support/system.ts";
import { admin, E, L, M, openTopic, publish, subscribe } from "./subscriptions/helpers.ts";

// Crash survived: none. What an operator sees: /metrics on every service moving with a publish,
// a delivery and a failed callback; the request id from the access log to the indexer; the
// delivery-attempt log; and endpoint health (410 Gone, continuous failure) suspending a
// subscription with a reason until replay.
describe("observability", () => {
  let sys: TestSystem;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await Receiver.start();
    receivers.push(r);
    return r;
  };
  const scrapeAll = async () => ({
    gateway: await Scrape.of(sys.gatewayUrl),
    indexer: await Scrape.of(sys.originOf("indexer-1")),
    notifier: await Scrape.of(sys.originOf("notifier-1")),
  });
  const logLines = (name: string) =>
    readFileSync(sys.logFileOf(name), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        RETRY_BASE_MS: "100",
        RETRY_MAX_MS: "200",
        RETRY_MAX_ATTEMPTS: "1000",
        DELIVERY_TIMEOUT_MS: "1500",
        // Failing without a success for 3 s suspends a subscription (5 days by default).
        DELIVERY_DISABLE_AFTER_MS: "3000",
        NOTIFIER_POLL_MS: "200",
        NOTIFIER_SWEEP_MS: "500",
        METRICS_POLL_MS: "200",
      },
      indexerEnv: { LOG_LEVEL: "debug" },
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await sys?.stop();
  });

  it("every service's /metrics moves with a publish, a delivery and a failed callback, with no subscription id or URL in a label", async () => {
    const ok = await receiver();
    const failing = await receiver();
    failing.answer = () => ({ status: 503, body: "down for maintenance" });
    await openTopic(sys.gatewayUrl, "metered");
    const okId = await subscribe(sys.gatewayUrl, { topic: "metered", url: ok.url() });
    const failingId = await subscribe(sys.gatewayUrl, { topic: "metered", url: failing.url() });
    const before = await scrapeAll();

    await publish(sys.gatewayUrl, "metered", "one");
    await ok.until(() => ok.deliveredIds(okId).length === 1, "the delivery");
    await failing.until(() => failing.requests.length >= 2, "two failed attempts");

    await expect
      .poll(
        async () => {
          const s = await scrapeAll();
          return {
            requests:
              s.gateway.count("evb_http_requests_total", { variant: "M", operation: "rest/publish", result: "SUCCESS" }) -
              before.gateway.count("evb_http_requests_total", { variant: "M", operation: "rest/publish", result: "SUCCESS" }),
            publishes:
              s.gateway.count("evb_publish_total", { group: "1", outcome: "SUCCESS" }) -
              before.gateway.count("evb_publish_total", { group: "1", outcome: "SUCCESS" }),
            publishTimed: s.gateway.count("evb_publish_duration_seconds_count", { group: "1", outcome: "SUCCESS" }) > 0,
            batches: s.gateway.count("evb_log_produce_batch_records_count") > before.gateway.count("evb_log_produce_batch_records_count"),
            cap: s.gateway.value("evb_log_appends_waiting_cap"),
            blocks:
              s.indexer.count("evb_indexer_blocks_sealed_total", { group: "1" }) >
              before.indexer.count("evb_indexer_blocks_sealed_total", { group: "1" }),
            events:
              s.indexer.count("evb_indexer_events_sealed_total", { group: "1" }) -
              before.indexer.count("evb_indexer_events_sealed_total", { group: "1" }),
            height: (s.indexer.value("evb_chain_height", { group: "1" }) ?? 0) >= 1,
            lag: s.indexer.value("evb_indexer_lag_records", { group: "1" }),
            delivered:
              s.notifier.count("evb_delivery_attempts_total", { result: "delivered", status_class: "2xx" }) -
              before.notifier.count("evb_delivery_attempts_total", { result: "delivered", status_class: "2xx" }),
            failed:
              s.notifier.count("evb_delivery_attempts_total", { result: "failed", status_class: "5xx" }) >
              before.notifier.count("evb_delivery_attempts_total", { result: "failed", status_class: "5xx" }),
            latency: s.notifier.count("evb_delivery_latency_seconds_count") - before.notifier.count("evb_delivery_latency_seconds_count"),
            backlog: (s.notifier.value("evb_delivery_backlog_events") ?? 0) >= 1,
            backlogAge: (s.notifier.value("evb_delivery_backlog_oldest_age_seconds") ?? 0) > 0,
            dispatchLag: s.notifier.value("evb_dispatch_lag_blocks", { group: "1" }),
          };
        },
        { timeout: 20_000, interval: 300 },
      )
      .toEqual({
        requests: 1,
        publishes: 1,
        publishTimed: true,
        batches: true,
        cap: 20_000,
        blocks: true,
        events: 1,
        height: true,
        lag: 0,
        delivered: 1,
        failed: true,
        latency: 1,
        backlog: true,
        backlogAge: true,
        dispatchLag: 0,
      });

    const after = await scrapeAll();
    // Nothing refused in a healthy run, and the series is there to alert on.
    expect(after.indexer.value("evb_indexer_log_refused", { group: "1" })).toBe(0);
    expect(after.indexer.value("evb_indexer_records_refused_total", { group: "1", reason: "undecodable" })).toBe(0);
    for (const [service, s] of Object.entries(after)) {
      // Process and event-loop metrics, under the one prefix, labelled with the service.
      expect(s.value("evb_process_cpu_seconds_total", { service }), service).toBeGreaterThan(0);
      expect(s.names().has("evb_nodejs_eventloop_lag_seconds"), service).toBe(true);
      expect(
        s.samples.every((x) => x.name.startsWith("evb_")),
        service,
      ).toBe(true);
      for (const secret of [okId, failingId, ok.url(), failing.url(), String(new URL(ok.url()).port)])
        expect(
          s.samples.some((x) => Object.values(x.labels).some((v) => v.includes(secret))),
          `${service} labels name ${secret}`,
        ).toBe(false);
    }
  });

  it("the request id comes back in X-Request-Id, is on the access log line, and reaches the indexer's log for that record", async () => {
    await openTopic(sys.gatewayUrl, "traced");
    const res = await fetch(`${sys.gatewayUrl}${M}/rest/publish`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-request-id": "trace-me-42" },
      body: "topic=traced&content=hello",
    });
    expect(res.headers.get("x-request-id")).toBe("trace-me-42");
    const { eventId } = (await res.json()) as { eventId: string };
    // An unsafe id is replaced, not echoed.
    const odd = await fetch(`${sys.gatewayUrl}${M}/rest/state?topic=traced`, { headers: { "x-request-id": "<b>x</b>" } });
    expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    await expect
      .poll(() => logLines("gateway-1").find((l) => l.requestId === "trace-me-42" && l.msg === "request"), { timeout: 10_000 })
      .toMatchObject({
        method: "POST",
        path: `${M}/rest/publish`,
        variant: "M",
        operation: "rest/publish",
        result: "SUCCESS",
        status: 200,
        component: "http",
      });
    await expect
      .poll(() => logLines("indexer-1").find((l) => l.requestId === "trace-me-42"), { timeout: 10_000 })
      .toMatchObject({ msg: "event sealed", eventId, component: "sealer" });
  });

  it("admin/deliveryAttempts lists each attempt newest first, with status, error and the answer's excerpt", async () => {
    const rx = await receiver();
    rx.answer = ({ n }) => (n < 2 ? { status: 500, body: `{"error":"boom ${n}"}` } : { status: 200, body: "thanks" });
    await openTopic(sys.gatewayUrl, "audited");
    const id = await subscribe(sys.gatewayUrl, { topic: "audited", url: rx.url() });
    const eventId = await publish(sys.gatewayUrl, "audited", "x");
    await rx.until(() => rx.deliveredIds(id).length === 1, "the delivery");
    type Page = { code: number; data: { total: number; pageIndex: number; pageSize: number; pageData: Record<string, unknown>[] } };
    await expect
      .poll(
        async () =>
          ((await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: id, pageNumber: "1", pageSize: "10" })) as Page).data
            .total,
        {
          timeout: 10_000,
        },
      )
      .toBe(3);
    const page = (await admin(sys.gatewayUrl, L, "deliveryAttempts", { subscriptionId: id, pageNumber: "1", pageSize: "2" })) as Page;
    expect(page.code).toBe(0);
    // E's admin replies are bare, as for its other admin operations.
    expect(await admin(sys.gatewayUrl, E, "deliveryAttempts", { subscriptionId: id, pageNumber: "1", pageSize: "2" })).toEqual(page.data);
    expect(page.data).toMatchObject({ total: 3, pageIndex: 1, pageSize: 2 });
    expect(page.data.pageData).toEqual([
      expect.objectContaining({
        eventId,
        delivered: true,
        httpStatus: 200,
        error: null,
        excerpt: "thanks",
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({ eventId, delivered: false, httpStatus: 500, error: "HTTP 500", excerpt: '{"error":"boom 1"}' }),
    ]);
    const rest = (await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: id, pageNumber: "2", pageSize: "2" })) as Page;
    expect(rest.data.pageData).toEqual([expect.objectContaining({ httpStatus: 500, excerpt: '{"error":"boom 0"}' })]);

    // Bad input gets the documented codes.
    expect(await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: " " })).toMatchObject({ code: 100503 });
    expect(await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: "00000000-0000-0000-0000-000000000000" })).toMatchObject({
      code: 100504,
    });
    expect(await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: id, pageSize: "101" })).toMatchObject({ code: 100107 });
    expect(await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: id, pageNumber: "0" })).toMatchObject({ code: 100104 });
    expect(((await call(sys.gatewayUrl, `${M}/admin/deliveryAttempts`)).json as { code: number }).code).not.toBe(0);
  });

  it("a receiver answering 410 Gone is suspended at once, with that reason, a log line and a metric; replay resumes it", async () => {
    const rx = await receiver();
    rx.answer = () => ({ status: 410 });
    await openTopic(sys.gatewayUrl, "gone");
    const id = await subscribe(sys.gatewayUrl, { topic: "gone", url: rx.url() });
    const before = await Scrape.of(sys.originOf("notifier-1"));
    const eventId = await publish(sys.gatewayUrl, "gone", "bye");
    type Dead = { data: { subscriptionId: string; eventId: string; attempts: number; lastError: string }[] };
    await expect
      .poll(async () => ((await admin(sys.gatewayUrl, M, "deadLetters")) as Dead).data.find((d) => d.subscriptionId === id), {
        timeout: 10_000,
      })
      .toMatchObject({ eventId, attempts: 1, lastError: expect.stringMatching(/410 Gone/) });
    expect(rx.requests).toHaveLength(1);
    const after = await Scrape.of(sys.originOf("notifier-1"));
    expect(
      after.count("evb_delivery_suspensions_total", { reason: "gone" }) -
        before.count("evb_delivery_suspensions_total", { reason: "gone" }),
    ).toBe(1);
    await expect
      .poll(async () => (await Scrape.of(sys.originOf("notifier-1"))).value("evb_subscriptions_dead_lettered"), { timeout: 5_000 })
      .toBeGreaterThanOrEqual(1);
    expect(logLines("notifier-1").filter((l) => l.event === "subscription_suspended" && l.subscriptionId === id)).toEqual([
      expect.objectContaining({ reason: "gone", status: 410, eventId, component: "delivery" }),
    ]);

    rx.answer = () => ({ status: 200 });
    await admin(sys.gatewayUrl, M, "replayDeadLetters", { subscriptionId: id });
    await rx.until(() => rx.deliveredIds(id).length === 1, "the delivery after replay");
    expect(rx.deliveredIds(id)).toEqual([eventId]);
  });

  it("a subscription failing without a success for DELIVERY_DISABLE_AFTER_MS is suspended before its retry budget is spent", async () => {
    const rx = await receiver();
    rx.answer = () => ({ status: 500 });
    await openTopic(sys.gatewayUrl, "sick");
    const id = await subscribe(sys.gatewayUrl, { topic: "sick", url: rx.url() });
    await publish(sys.gatewayUrl, "sick", "x");
    type Dead = { data: { subscriptionId: string; attempts: number; lastError: string }[] };
    await expect
      .poll(async () => ((await admin(sys.gatewayUrl, M, "deadLetters")) as Dead).data.find((d) => d.subscriptionId === id), {
        timeout: 20_000,
      })
      .toMatchObject({ lastError: expect.stringMatching(/^suspended: failing without a success for \d+ s \(last: HTTP 500\)$/) });
    const entry = ((await admin(sys.gatewayUrl, M, "deadLetters")) as Dead).data.find((d) => d.subscriptionId === id);
    // Well before the budget of 1000 attempts.
    expect(entry?.attempts).toBeLessThan(1000);
    expect(
      (await Scrape.of(sys.originOf("notifier-1"))).count("evb_delivery_suspensions_total", { reason: "failing_too_long" }),
    ).toBeGreaterThanOrEqual(1);
  });
  // Regression: a paused subscription's backlog raised evb_delivery_backlog_oldest_age_seconds, so
  // the shipped EvbDeliveryBacklogOld alert fired for a deliberate pause.
  it("a paused subscription's backlog is counted as paused and left out of the backlog age", async () => {
    const notifier = () => Scrape.of(sys.originOf("notifier-1"));
    // Earlier cases' backlogs are delivered or suspended first.
    await expect.poll(async () => (await notifier()).value("evb_delivery_backlog_oldest_age_seconds"), { timeout: 20_000 }).toBe(0);
    const rx = await receiver();
    await openTopic(sys.gatewayUrl, "paused-on-purpose");
    const id = await subscribe(sys.gatewayUrl, { topic: "paused-on-purpose", url: rx.url(), paused: "true" });
    const backlogBefore = (await notifier()).value("evb_delivery_backlog_events") ?? 0;
    await publish(sys.gatewayUrl, "paused-on-purpose", "waits");
    let seen: Scrape | undefined;
    await expect
      .poll(
        async () => {
          seen = await notifier();
          return (seen.value("evb_delivery_backlog_events") ?? 0) > backlogBefore;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    // The same poll of the gauges that counts the waiting event leaves its age out.
    expect(seen?.value("evb_delivery_backlog_oldest_age_seconds")).toBe(0);
    expect(seen?.value("evb_subscriptions_paused")).toBeGreaterThanOrEqual(1);
    expect(rx.requests).toHaveLength(0);
    await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, paused: "false" });
    await rx.until(() => rx.deliveredIds(id).length === 1, "the delivery after the resume");
  });
});
