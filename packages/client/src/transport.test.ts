import { describe, expect, it } from "vitest";
import { BrokerClientL } from "./clients.ts";
import { BrokerError, BrokerTransportError } from "./errors.ts";

function fakeFetch(reply: () => Response, seen: Request[] = []): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    seen.push(req);
    if (init?.signal?.aborted) throw init.signal.reason;
    return reply();
  };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json;charset=UTF-8" } });

describe("Transport", () => {
  it("posts the parameters as a form to <baseUrl>/<operation> with a bearer token", async () => {
    const seen: Request[] = [];
    const c = new BrokerClientL({
      baseUrl: "http://h/event-broker/",
      token: "k1",
      groupId: "2",
      fetch: fakeFetch(() => json({ code: 0, message: "success", data: true }), seen),
    });
    expect(await c.open("a b+c")).toBe(true);
    const req = seen[0] as Request;
    expect(req.url).toBe("http://h/event-broker/rest/open");
    expect(req.method).toBe("POST");
    expect(req.headers.get("authorization")).toBe("Bearer k1");
    expect(new URLSearchParams(await req.text()).get("topic")).toBe("a b+c");
  });
  it("sends Basic credentials", async () => {
    const seen: Request[] = [];
    const c = new BrokerClientL({ baseUrl: "http://h/x", basic: "u:p:w", fetch: fakeFetch(() => json(["1"]), seen) });
    await c.listGroup();
    expect(seen[0]?.headers.get("authorization")).toBe(`Basic ${Buffer.from("u:p:w").toString("base64")}`);
  });
  it("throws BrokerError with the code and message of the error object", async () => {
    const c = new BrokerClientL({
      baseUrl: "http://h/x",
      fetch: fakeFetch(() => json({ code: 100101, message: "topic not exist", data: null })),
    });
    const err = await c.close("t").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerError);
    expect(err).toMatchObject({ code: 100101, brokerMessage: "topic not exist", operation: "rest/close" });
  });
  it("reports a non-200 status as an http transport failure", async () => {
    const c = new BrokerClientL({ baseUrl: "http://h/x", fetch: fakeFetch(() => new Response("", { status: 401 })) });
    await expect(c.listGroup()).rejects.toMatchObject({ failure: "http", status: 401 });
  });
  it("carries Retry-After of a rate-limited publish", async () => {
    const c = new BrokerClientL({
      baseUrl: "http://h/x",
      fetch: fakeFetch(() => new Response("{}", { status: 429, headers: { "retry-after": "3" } })),
    });
    await expect(c.publish("t", "c")).rejects.toMatchObject({ failure: "http", status: 429, retryAfterSec: 3 });
  });
  it("sends a publish's idempotencyKey as the Idempotency-Key header, not as a parameter", async () => {
    const seen: Request[] = [];
    const ok = () => json({ status: "SUCCESS", topic: "t", eventId: "e-1" });
    const c = new BrokerClientL({ baseUrl: "http://h/x", fetch: fakeFetch(ok, seen) });
    expect(await c.publish("t", "c", { idempotencyKey: "order-4711", extensions: { "event-a": "1" } })).toMatchObject({ eventId: "e-1" });
    await c.publish("t", "c");
    const [keyed, plain] = seen as [Request, Request];
    expect(keyed.headers.get("idempotency-key")).toBe("order-4711");
    expect(keyed.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    const form = new URLSearchParams(await keyed.text());
    expect([...form.keys()].sort()).toEqual(["content", "event-a", "topic"]);
    expect(form.has("idempotencyKey")).toBe(false);
    expect(plain.headers.has("idempotency-key")).toBe(false);
  });
  it("tells a caller's abort from a timeout", async () => {
    const hang: typeof fetch = (_i, init) =>
      new Promise((_r, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    const c = new BrokerClientL({ baseUrl: "http://h/x", fetch: hang, timeoutMs: 20 });
    await expect(c.listGroup()).rejects.toMatchObject({ failure: "timeout" });
    const ac = new AbortController();
    const p = c.listGroup({ signal: ac.signal, timeoutMs: 60_000 });
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerTransportError);
    expect(err).toMatchObject({ failure: "aborted" });
  });

  it("publishMany posts the events as one JSON body to rest/publishBatch and returns the per-event results", async () => {
    const seen: Request[] = [];
    const results = [
      { status: "SUCCESS", topic: "t", eventId: "e1" },
      { code: 100101, message: "topic not exist" },
    ];
    const c = new BrokerClientL({ baseUrl: "http://h/event-broker", groupId: "2", fetch: fakeFetch(() => json(results), seen) });
    const events = [
      { topic: "t", content: "a", idempotencyKey: "k1", extensions: { "event-x": "1" } },
      { topic: "u", content: "b" },
    ];
    expect(await c.publishMany(events)).toEqual(results);
    const req = seen[0] as Request;
    expect(req.url).toBe("http://h/event-broker/rest/publishBatch");
    expect(req.headers.get("content-type")).toBe("application/json");
    expect(await req.json()).toEqual({ groupId: "2", events });
    // A batch refused whole is a BrokerError, as any call's.
    const refused = new BrokerClientL({
      baseUrl: "http://h/event-broker",
      fetch: fakeFetch(() => json({ code: 100212, message: "m", data: null })),
    });
    await expect(refused.publishMany(events)).rejects.toMatchObject({ code: 100212 });
  });
});
