import type { Variant } from "@evb/domain";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CONTEXT, expectBrokerError, expectJson200, expectSuccess, genericCodeOf, rest, uniqueTopic } from "./support/broker-expect.ts";
import { type CallResult, call } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";
import { TcpRelay } from "./support/tcp-relay.ts";

const TIMEOUT = { code: 200201, message: "the transaction is timeout." };
const FAILED = { code: 200202, message: "the transaction does not correctly executed." };
const RPC = { code: 200214, message: "we3sdk's rpc failed" };
const HEIGHT = {
  code: 200205,
  message: "get block height failed due to InterruptedException|ExecutionException|TimeoutException|RuntimeException",
};

function admin(base: string, variant: Variant, op: string, params: Record<string, string> = {}): Promise<CallResult> {
  return call(base, `${CONTEXT[variant]}/admin/${op}`, params);
}

// Crash survived: the gateway's Postgres hangs (connections open, nothing answered) and then
// goes away (connections cut, new ones refused), and comes back. Every request gets its
// documented code in its variant's shape within the query timeout instead of hanging or a 5xx,
// and the gateway serves normally again once Postgres answers, without a restart.
describe("the gateway loses Postgres", () => {
  let sys: TestSystem;
  let relay: TcpRelay;
  let url: string;
  const topic = uniqueTopic("gwpg");
  let eventId: string;

  beforeAll(async () => {
    relay = TcpRelay.for(inject("databaseUrl"), 5432);
    await relay.start();
    sys = await TestSystem.start({
      gatewayEnv: { DATABASE_URL: relay.via(inject("databaseUrl")), DATABASE_QUERY_TIMEOUT_MS: "1000" },
    });
    url = sys.gatewayUrl;
    expect(expectSuccess(await rest(url, "L", "open", { topic }), "L")).toBe(true);
    // publish answers the bare SendResult in every variant.
    const sent = expectJson200(await rest(url, "L", "publish", { topic, content: "before the outage" })) as { eventId: string };
    eventId = sent.eventId;
  });
  afterAll(async () => {
    relay?.up();
    await sys?.stop();
    relay?.close();
  });

  it("a hung database: reads and topic creation time out with 200201 in M and L, 200202 in E", async () => {
    relay.stall();
    const fresh = uniqueTopic("gwpg-new");
    // All at once: more requests than pool connections, so some also wait for a connection.
    const paging = { groupId: "1", pageNumber: "1", pageSize: "10" };
    const timedOut = (["L", "M"] as const).flatMap(
      (v) =>
        [
          [v, rest(url, v, "open", { topic: fresh })],
          [v, rest(url, v, "exist", { topic })],
          [v, rest(url, v, "state", { topic })],
          [v, rest(url, v, "list", { pageIndex: "0", pageSize: "10" })],
          [v, rest(url, v, "publish", { topic: fresh, content: "unknown topic" })],
          [v, admin(url, v, "group/general", { groupId: "1" })],
          [v, admin(url, v, "block/blockList", paging)],
          [v, admin(url, v, "transaction/transList", paging)],
        ] as const,
    );
    for (const [v, reply] of timedOut) expectBrokerError(await reply, v, TIMEOUT.code, TIMEOUT.message);
    for (const op of ["open", "state", "exist"])
      expectBrokerError(await rest(url, "E", op, { topic: fresh }), "E", FAILED.code, FAILED.message);
    // A topic this gateway has seen needs no read to publish (topics are never deleted): the
    // write path (Kafka, indexer) does not depend on the gateway's database connection.
    const during = expectJson200(await rest(url, "M", "publish", { topic, content: "during the outage" })) as { status: string };
    expect(during.status).toBe("SUCCESS");
    expectBrokerError(await rest(url, "E", "publish", { topic: fresh, content: "unknown topic" }), "E", FAILED.code, FAILED.message);
    // The chain height cannot be read: 200205 in every variant.
    for (const v of ["L", "M", "E"] as const)
      expectBrokerError(await rest(url, v, "getEvent", { eventId }), v, HEIGHT.code, HEIGHT.message);
  });

  it("a database that refuses connections: 200202 for topic creation, 200214 for chain queries, the generic code for reads", async () => {
    relay.down();
    const fresh = uniqueTopic("gwpg-down");
    for (const v of ["L", "M", "E"] as const)
      expectBrokerError(await rest(url, v, "open", { topic: fresh }), v, FAILED.code, FAILED.message);
    for (const v of ["L", "M"] as const) {
      expectBrokerError(await rest(url, v, "exist", { topic }), v, genericCodeOf(v));
      const paging = { groupId: "1", pageNumber: "1", pageSize: "10" };
      expectBrokerError(await admin(url, v, "block/blockList", paging), v, RPC.code, RPC.message);
    }
    expectBrokerError(await rest(url, "E", "exist", { topic }), "E", FAILED.code, FAILED.message);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(503);
  });

  it("serves normally again once Postgres answers, without a restart", async () => {
    relay.up();
    let state: CallResult | undefined;
    for (let i = 0; i < 50; i++) {
      state = await rest(url, "L", "state", { topic });
      if ((state.json as { code?: number } | undefined)?.code === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((expectSuccess(state as CallResult, "L") as { topicName: string }).topicName).toBe(topic);
    const got = expectSuccess(await rest(url, "L", "getEvent", { eventId }), "L") as { content: string };
    expect(Buffer.from(got.content, "base64").toString()).toBe("before the outage");
    const sent = expectJson200(await rest(url, "L", "publish", { topic, content: "after the outage" })) as { status: string };
    expect(sent.status).toBe("SUCCESS");
  });
});
