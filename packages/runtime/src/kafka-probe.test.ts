import { afterEach, describe, expect, it, vi } from "vitest";
import { judgeMetadata, KafkaProbe, type MetadataAdmin, type TopicMetadata } from "./kafka-probe.ts";

const topic = (name: string, leaders: number[]): TopicMetadata => ({
  name,
  partitions: leaders.map((leader, partitionId) => ({ partitionId, leader })),
});

describe("judgeMetadata", () => {
  it("is ok when every log topic has a leader for every partition", () => {
    expect(judgeMetadata(["a", "b"], [topic("a", [1, 2]), topic("b", [3])])).toEqual({ ok: true });
  });

  it("names a missing topic and leaderless partitions", () => {
    expect(judgeMetadata(["a", "b"], [topic("a", [1, -1, -1])])).toEqual({
      ok: false,
      reason: "Kafka: log topic a has no leader for partition(s) 1, 2; log topic b does not exist",
    });
  });
});

/** An admin whose answers the test controls: each request waits for `answer` or `fail`. */
function fakeAdmin() {
  const pending: Array<{ resolve: (t: TopicMetadata[]) => void; reject: (e: Error) => void }> = [];
  const admin: MetadataAdmin & { disconnected: boolean } = {
    disconnected: false,
    close: async () => {
      admin.disconnected = true;
    },
    topicMetadata: () => new Promise((resolve, reject) => pending.push({ resolve, reject })),
  };
  return { admin, pending };
}

describe("KafkaProbe", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers from its cache, and a hung request makes Kafka unreachable and replaces the client", async () => {
    vi.useFakeTimers();
    const admins = [fakeAdmin(), fakeAdmin()];
    let made = 0;
    const changes: boolean[] = [];
    const probe = new KafkaProbe({
      createAdmin: () => (admins[made++] as ReturnType<typeof fakeAdmin>).admin,
      topics: ["log.1"],
      intervalMs: 1_000,
      timeoutMs: 3_000,
      onChange: (k) => changes.push(k.ok),
      now: () => Date.now(),
    });
    const started = probe.start();
    await vi.advanceTimersByTimeAsync(0);
    admins[0]?.pending[0]?.resolve([topic("log.1", [1])]);
    await started;
    expect(probe.state()).toEqual({ ok: true });

    // The next request never answers (the network dropped).
    await vi.advanceTimersByTimeAsync(1_000);
    expect(admins[0]?.pending).toHaveLength(2);
    expect(probe.state()).toEqual({ ok: true });
    await vi.advanceTimersByTimeAsync(3_001);
    expect(probe.state()).toEqual({ ok: false, reason: "Kafka: no answer to a metadata request within 3000 ms" });
    expect(admins[0]?.admin.disconnected).toBe(true);

    // A fresh client is used from then on, and Kafka back makes it ok again.
    await vi.advanceTimersByTimeAsync(1_000);
    admins[1]?.pending[0]?.resolve([topic("log.1", [1])]);
    await vi.advanceTimersByTimeAsync(0);
    expect(probe.state()).toEqual({ ok: true });
    // Each change told once (a healthy first answer is no change): lost, then back.
    expect(changes).toEqual([false, true]);
    await probe.close();
  });

  it("reports a refused request with Kafka's message", async () => {
    const { admin, pending } = fakeAdmin();
    const probe = new KafkaProbe({ createAdmin: () => admin, topics: ["log.1"], intervalMs: 60_000, timeoutMs: 3_000 });
    const started = probe.start();
    await new Promise((r) => setImmediate(r));
    pending[0]?.reject(new Error("Connection error: connect ECONNREFUSED 127.0.0.1:9092"));
    await started;
    expect(probe.state()).toEqual({ ok: false, reason: "Kafka: Connection error: connect ECONNREFUSED 127.0.0.1:9092" });
    await probe.close();
  });
});
