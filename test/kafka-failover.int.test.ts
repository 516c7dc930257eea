import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleProgress, KafkaCluster } from "@evb/devstack";
import { call } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";

// Crash survived: SIGKILL of one of three Kafka brokers in the middle of a publish stream
// (log topics with replication factor 3, min.insync.replicas 2, acks=-1). Every publish that
// was answered SUCCESS must be readable afterwards.
describe("a Kafka broker dies during a publish stream", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-k3-"));
  const cluster = new KafkaCluster({
    dir,
    brokers: 3,
    // Below Linux's ephemeral range (32768–60999): no outgoing connection or listen(0) of a
    // concurrent test can hold one of these ports when a broker binds it (a flake seen in CI).
    // 26000–26902, clear of test/start-script.int.test.ts's 21000–25099.
    basePort: 26000 + Math.floor(Math.random() * 800),
    fresh: true,
    heap: "384m",
    progress: consoleProgress,
  });
  let sys: TestSystem;

  beforeAll(async () => {
    const brokers = await cluster.start();
    sys = await TestSystem.start({
      env: { KAFKA_BROKERS: brokers.join(","), KAFKA_REPLICATION_FACTOR: "3", PUBLISH_TIMEOUT_MS: "30000" },
    });
  });
  afterAll(async () => {
    await sys?.stop();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loses no acknowledged publish", async () => {
    const base = `${sys.gatewayUrl}/event-broker`;
    const topics = ["fo/a", "fo/b", "fo/c", "fo/d"];
    for (const topic of topics) expect((await call(base, "/rest/open", { topic })).json).toMatchObject({ data: true });

    const total = 240;
    const acked: { topic: string; eventId: string }[] = [];
    const other: string[] = [];
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        if (i === 80) await cluster.broker(2)?.signal("SIGKILL");
        const topic = topics[i % topics.length] as string;
        const r = await call(base, "/rest/publish", { topic, content: `event ${i}` }, "POST");
        const body = r.json as { status?: string; eventId?: string };
        if (body.status === "SUCCESS" && body.eventId) acked.push({ topic, eventId: body.eventId });
        else other.push(r.text);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(cluster.broker(2)?.running).toBe(false);
    // Most publishes must still succeed on the two surviving replicas.
    expect(acked.length).toBeGreaterThan(total / 2);

    for (const { eventId } of acked) {
      const r = await call(base, "/rest/getEvent", { eventId });
      expect((r.json as { code: number }).code, `${eventId}: ${r.text}`).toBe(0);
    }
    // Per topic, sequence numbers of acknowledged events are distinct.
    const ids = acked.map((a) => a.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
