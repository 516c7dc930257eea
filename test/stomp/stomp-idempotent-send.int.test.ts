import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { verifyLedger } from "../support/ledger-integrity.ts";
import { frame, hdr, type RawFrame, RawStomp, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";

// Crash survived: none (issue 21, item 5 over STOMP on a healthy system, real sockets). A SEND
// named by an idempotency-key header is the same publish as a rest/publish with that key: a
// repeat answers the first eventId, other content under the key is refused, and the ledger
// holds the event once.
describe("STOMP SEND with an idempotency key", () => {
  let sys: TestSystem;
  let base: string;
  const open: RawStomp[] = [];
  const T = uniqueTopic("stomp-idem");

  beforeAll(async () => {
    sys = await TestSystem.start();
    base = sys.gatewayUrl;
    expectSuccess(await rest(base, "L", "open", { topic: T }), "L");
  });
  afterAll(async () => {
    for (const r of open) r.close();
    await sys?.stop();
  });

  const connected = async () => {
    const r = await RawStomp.open(stompUrl(base));
    open.push(r);
    expect((await r.connect()).command).toBe("CONNECTED");
    return r;
  };
  const send = async (r: RawStomp, headers: Record<string, string>, body: string): Promise<RawFrame> => {
    const n = r.frames.length;
    r.send(frame("SEND", { destination: T, receipt: String(n), ...headers }, body));
    return r.nth(n);
  };
  const copies = async (content: string) => {
    const report = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(report.problems).toEqual([]);
    return report.events.filter((e) => e.content === content).length;
  };

  it("answers a repeat with the first eventId, over STOMP and over HTTP, and stores the event once", async () => {
    const r = await connected();
    const first = await send(r, { "idempotency-key": "order-1" }, "one");
    expect(first.command).toBe("RECEIPT");
    const eventId = hdr(first, "eventId") as string;
    expect(eventId).toMatch(/^[0-9a-f]{8}-\d+-\d+$/);
    const again = await send(await connected(), { "idempotency-key": "order-1" }, "one");
    expect(again.command).toBe("RECEIPT");
    expect(hdr(again, "eventId")).toBe(eventId);
    const res = await fetch(`${base}/event-broker/rest/publish`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "Idempotency-Key": "order-1" },
      body: new URLSearchParams({ topic: T, content: "one" }).toString(),
    });
    expect(await res.json()).toMatchObject({ status: "SUCCESS", eventId });
    expect(await copies("one")).toBe(1);
  });

  it("refuses other content under a used key, and a key that is not 1-255 visible ASCII, with the documented codes", async () => {
    const r = await connected();
    expect((await send(r, { "idempotency-key": "order-2" }, "two")).command).toBe("RECEIPT");
    const reused = await send(await connected(), { "idempotency-key": "order-2" }, "other");
    expect(reused.command).toBe("ERROR");
    expect(hdr(reused, "code")).toBe("100211");
    const bad = await send(await connected(), { "idempotency-key": "has space" }, "three");
    expect(bad.command).toBe("ERROR");
    expect(hdr(bad, "code")).toBe("100210");
    expect(await copies("other")).toBe(0);
    expect(await copies("three")).toBe(0);
  });

  it("without a key, two identical SENDs are two events, as in the original", async () => {
    const r = await connected();
    const a = await send(r, {}, "twice");
    const b = await send(r, {}, "twice");
    expect(hdr(a, "eventId")).not.toBe(hdr(b, "eventId"));
    expect(await copies("twice")).toBe(2);
  });
});
