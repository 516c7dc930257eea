import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { inSchema } from "./support/ledger-services.ts";
import { type Probe, probeReadiness } from "./support/readiness-probes.ts";
import { TestSystem } from "./support/system.ts";

// Fault survived: every seal of group 1 held by another connection's row lock on the chain head,
// while the indexer still heartbeats "can seal" (its own "seal stuck" verdict comes only after two
// query timeouts). The gateway's publishes wait with no receipt: after 5 s of that its /readyz
// must say so (a load balancer then sends publishes elsewhere), and be ready again once the
// publishes are answered.
describe("a gateway whose publishes are not being sealed", () => {
  let sys: TestSystem;
  let topic: string;
  const probes: Probe[] = [];
  let stopProbing = () => {};

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { PUBLISH_TIMEOUT_MS: "30000", DATABASE_QUERY_TIMEOUT_MS: "20000" } });
    topic = uniqueTopic("unsealed");
    expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
    stopProbing = probeReadiness([{ url: () => `${sys.gatewayUrl}/readyz`, into: probes }]);
  });
  afterAll(async () => {
    stopProbing();
    await sys?.stop();
  });

  it("says not ready while a publish has waited 5 s with no receipt, and ready again once it is answered", async () => {
    await expect.poll(() => probes.at(-1)?.status, { timeout: 30_000, interval: 200 }).toBe(200);
    let publish: Promise<{ json: unknown }> | undefined;
    let lockedFrom = 0;
    let releasedAt = 0;
    await inSchema(sys.env, async (c) => {
      await c.query("BEGIN");
      await c.query("SELECT 1 FROM chain_heads WHERE group_id = '1' FOR UPDATE");
      lockedFrom = Date.now();
      publish = rest(sys.gatewayUrl, "L", "publish", { topic, content: "held by a lock" }, "POST");
      await expect
        .poll(() => probes.find((p) => p.at > lockedFrom && p.status === 503)?.reason, { timeout: 12_000, interval: 200 })
        .toMatch(/publishes are not being sealed: 1 wait, the oldest for \d+ s, none answered for \d+ s/);
      await c.query("ROLLBACK");
      releasedAt = Date.now();
    });
    // Not before the 5 s the rule waits: a publish that is merely slow does not flip readiness.
    const first503 = probes.find((p) => p.at > lockedFrom && p.status === 503) as Probe;
    expect(first503.at - lockedFrom).toBeGreaterThanOrEqual(4_500);
    const answered = (await publish)?.json as { status: string; eventId: string };
    expect(answered.status).toBe("SUCCESS");
    await expect.poll(() => probes.filter((p) => p.at > releasedAt).at(-1)?.status, { timeout: 10_000, interval: 200 }).toBe(200);
  });
});
