import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTEXT, expectBrokerError, uniqueTopic } from "./support/broker-expect.ts";
import { call } from "./support/http.ts";
import { rawCall } from "./support/raw-http.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };
/** Hang bound for /livez while a large listing is in flight: generous, not a timing goal. */
const HANG_BOUND_MS = 5_000;
const SUBSCRIPTIONS = 300;

// Crash survived: none; a hostile caller on a healthy system. One admin/listSubscription naming
// 140,000 nodes held the gateway's event loop for seconds (probe report, defect 1), and a node
// named "__proto__" was lost from the answer (defect 11(c)).
describe("admin/listSubscription bounds", () => {
  let sys: TestSystem;
  let rx: Receiver;
  let base: string;
  let self: string;

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8" } });
    base = sys.gatewayUrl;
    rx = await Receiver.start();
    const topic = uniqueTopic("lsb");
    expect((await call(base, `${CONTEXT.M}/rest/open`, { topic })).json).toBe(true);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < SUBSCRIPTIONS) {
          next++;
          const r = await call(base, `${CONTEXT.M}/rest/subscribe`, { topic, url: rx.url() }, "POST");
          expect(r.text).toMatch(/^[0-9a-f-]{36}$/);
        }
      }),
    );
    const e = (await call(base, `${CONTEXT.E}/admin/listSubscription`)).json as Record<string, object>;
    self = Object.keys(e)[0] as string;
    expect(Object.keys(e[self] as object)).toHaveLength(SUBSCRIPTIONS);
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
    await rx?.close();
  });

  /** Sends `body` to listSubscription while asking /livez: both must answer within the hang bound. */
  async function listWithLivezAlongside(variant: "L" | "M", body: string) {
    const listing = rawCall(base, {
      method: "POST",
      path: `${CONTEXT[variant]}/admin/listSubscription`,
      headers: FORM,
      body,
      timeoutMs: 60_000,
    });
    const livez = await rawCall(base, { path: "/livez", timeoutMs: HANG_BOUND_MS });
    expect(livez.status, livez.text).toBe(200);
    return listing;
  }

  it("defect 1: 140,000 nodes with a few hundred subscriptions is refused at the node cap while /livez answers", async () => {
    const nodes = `${Array.from({ length: 140_000 }, (_, i) => String(i)).join(",")},${self}`;
    const l = await listWithLivezAlongside("L", `nodeInstances=${nodes}`);
    expectBrokerError(l, "L", 200000, "more than 1000 nodes in nodeInstances; ask for fewer");
    const m = await listWithLivezAlongside("M", `nodeIp=${nodes}`);
    expectBrokerError(m, "M", 200203, "more than 1000 nodes in nodeIp; ask for fewer");
  });

  it("defect 1: 1,000 distinct nodes (repeats not counted) are listed in full, each node with its own subscriptions", async () => {
    const others = Array.from({ length: 999 }, (_, i) => `10.0.${Math.floor(i / 250)}.${i % 250}:1`);
    const body = `nodeInstances=${[self, ...others, ...others, self].join(",")}`;
    const l = await listWithLivezAlongside("L", body);
    const data = (l.json as { code: number; data: Record<string, { subscribeId: string }[]> }).data;
    expect(Object.keys(data)).toEqual([self, ...others]);
    expect(data[self]).toHaveLength(SUBSCRIPTIONS);
    for (const n of others) expect(data[n]).toEqual([]);
    const m = await listWithLivezAlongside("M", `nodeIp=${[...others, self].join(",")}`);
    const byId = (m.json as { data: Record<string, Record<string, { subscribeId: string }>> }).data;
    expect(Object.keys(byId[self] ?? {})).toEqual(data[self]?.map((r) => r.subscribeId));
  });

  it("defect 11(c): a node named __proto__ keeps its key in L and M", async () => {
    const l = await rawCall(base, { path: `${CONTEXT.L}/admin/listSubscription?nodeInstances=__proto__,${self}` });
    expect(l.text).toMatch(/^\{"code":0,"message":"success","data":\{"__proto__":\[\],/);
    const m = await rawCall(base, { path: `${CONTEXT.M}/admin/listSubscription?nodeIp=__proto__` });
    expect(m.text).toBe('{"code":0,"message":"success","data":{"__proto__":{}}}');
  });
});
