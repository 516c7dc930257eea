import type { Client } from "@stomp/stompjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicHash8 } from "@evb/domain";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { call } from "../support/http.ts";
import { frame, hdr, Inbox, type RawFrame, RawStomp, stompClient, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
type Event = { topic: string; content: string; extensions: Record<string, string>; eventId: string };

// Crash survived: none (the STOMP cases of protocols.md §7 on a healthy system, real sockets).
describe("STOMP over WebSocket (protocols.md §7)", () => {
  let sys: TestSystem;
  let base: string;
  let url: string;
  const open: RawStomp[] = [];
  const clients: Client[] = [];
  const T = uniqueTopic("stomp");
  const T2 = uniqueTopic("stomp2");

  beforeAll(async () => {
    sys = await TestSystem.start({
      env: { GROUP_IDS: "1,2" },
      gatewayEnv: { STOMP_HEARTBEAT_MS: "1000", STOMP_POLL_MS: "500", STOMP_MAX_FRAME_BYTES: "16384" },
    });
    base = sys.gatewayUrl;
    url = stompUrl(base);
    for (const t of [T, T2, "a", "a/b"]) expectSuccess(await rest(base, "L", "open", { topic: t }), "L");
  });
  afterAll(async () => {
    for (const r of open) r.close();
    for (const c of clients) await c.deactivate();
    await sys?.stop();
  });

  const raw = async (opts?: Parameters<typeof RawStomp.open>[1]) => {
    const r = await RawStomp.open(url, opts);
    open.push(r);
    return r;
  };
  const client = async () => {
    const c = await stompClient(url);
    clients.push(c);
    return c;
  };
  /** SEND and wait for its reply. */
  const send = async (r: RawStomp, headers: Record<string, string>, body: string): Promise<RawFrame> => {
    const n = r.frames.length;
    r.send(frame("SEND", headers, body));
    return r.nth(n);
  };
  const subscribe = async (r: RawStomp, headers: Record<string, string>): Promise<RawFrame> => {
    const n = r.frames.length;
    r.send(frame("SUBSCRIBE", headers));
    return r.nth(n);
  };
  const getEvent = async (eventId: string) => expectSuccess(await rest(base, "L", "getEvent", { eventId }), "L") as Event;
  const listed = async () => {
    const node = new URL(base).host;
    const r = await call(base, "/event-broker/admin/listSubscription", { nodeInstances: node });
    return (expectSuccess(r, "L") as Record<string, Record<string, string>[]>)[node] ?? [];
  };
  const messages = (r: RawStomp, id?: string) =>
    r.frames.filter((f) => f.command === "MESSAGE" && (id === undefined || hdr(f, "subscription-id") === id));

  it("case 1: a plain upgrade without a sub-protocol; CONNECT → CONNECTED version 1.1, heart-beat 0,30000 as the original", async () => {
    const r = await raw();
    expect(r.ws.protocol).toBe("");
    const f = await r.connect();
    expect(f.command).toBe("CONNECTED");
    // STOMP_HEARTBEAT_MS is 1000 in this suite: the original's 0,30000 with its 30 s setting.
    expect(f.headers).toEqual([
      ["heart-beat", "0,1000"],
      ["version", "1.1"],
    ]);
  });

  it("case 3: SEND with receipt:7 → RECEIPT receipt-id:7 and a well-formed eventId that getEvent resolves", async () => {
    const r = await raw();
    const f = await send(
      r,
      { destination: T, receipt: "7", "event-tag": "test", "content-type": "text/plain;charset=UTF-8" },
      "hello world",
    );
    expect(f.command).toBe("RECEIPT");
    expect(f.headers.map(([k]) => k)).toEqual(["destination", "eventId", "receipt-id"]);
    expect(hdr(f, "receipt-id")).toBe("7");
    const eventId = hdr(f, "eventId") as string;
    expect(eventId).toMatch(new RegExp(`^${topicHash8(T)}-\\d+-\\d+$`));
    const e = await getEvent(eventId);
    expect(e.topic).toBe(T);
    expect(Buffer.from(e.content, "base64").toString()).toBe("hello world");
    expect(e.extensions["event-tag"]).toBe("test");
  });

  it("case 4: SEND errors carry code, message and receipt-id: 100101, 100200, 200211, 100103", async () => {
    const r = await raw();
    const cases: [Record<string, string>, string, string, string][] = [
      [{ destination: uniqueTopic("missing"), receipt: "7" }, "x", "100101", "topic not exist"],
      [{ destination: T, receipt: "8" }, "", "100200", "event content is blank"],
      [{ destination: T, receipt: "9", groupId: "100" }, "x", "200211", "unknown group id"],
      [{ receipt: "10" }, "x", "100103", "topic name is blank"],
    ];
    for (const [headers, body, code, message] of cases) {
      const f = await send(r, headers, body);
      expect(f.command).toBe("ERROR");
      expect(f.headers).toEqual([
        ["message", message],
        ["code", code],
        ["receipt-id", headers.receipt],
        ["content-length", "0"],
      ]);
    }
  });

  it("case 5: a SEND without a receipt header still gets a RECEIPT, with no receipt-id", async () => {
    const r = await raw();
    const f = await send(r, { destination: T }, "no receipt");
    expect(f.command).toBe("RECEIPT");
    expect(hdr(f, "receipt-id")).toBeUndefined();
    expect(hdr(f, "eventId")).toBeTruthy();
  });

  it("case 6: several frames in one WebSocket message are all answered, in order", async () => {
    const r = await raw();
    r.send(
      frame("CONNECT", { "accept-version": "1.1" }) +
        frame("SEND", { destination: T, receipt: "a" }, "one") +
        frame("SEND", { destination: uniqueTopic("no"), receipt: "b" }, "two") +
        frame("SEND", { destination: T, receipt: "c" }, "three"),
    );
    const f = await r.until((fs) => fs.length >= 4);
    expect(f.map((x) => `${x.command}:${hdr(x, "receipt-id") ?? ""}`)).toEqual(["CONNECTED:", "RECEIPT:a", "ERROR:b", "RECEIPT:c"]);
  });

  it("case 7: SUBSCRIBE id:1 → RECEIPT with a UUID subscription-id, then a MESSAGE with every header the original wrote", async () => {
    const r = await raw();
    const receipt = await subscribe(r, { destination: T, id: "1", eventId: "OFFSET_LAST" });
    expect(receipt.command).toBe("RECEIPT");
    expect(receipt.headers.map(([k]) => k)).toEqual(["destination", "receipt-id", "subscription-id"]);
    expect(hdr(receipt, "receipt-id")).toBe("1");
    const id = hdr(receipt, "subscription-id") as string;
    expect(id).toMatch(UUID);
    const sender = await raw();
    const sent = hdr(await send(sender, { destination: T, receipt: "1", "event-tag": "t7" }, "to subscribers"), "eventId");
    const [m] = await r.until(() => messages(r).length > 0).then(() => messages(r));
    expect(m?.headers.map(([k]) => k)).toEqual([
      "subscription",
      "subscription-id",
      "message-id",
      "destination",
      "content-type",
      "event-tag",
      "event-plus",
      "eventId",
      "content-length",
    ]);
    expect(hdr(m as RawFrame, "subscription")).toBe("1");
    expect(hdr(m as RawFrame, "subscription-id")).toBe(id);
    expect(hdr(m as RawFrame, "destination")).toBe(T);
    expect(hdr(m as RawFrame, "content-type")).toBe("text/plain;charset=UTF-8");
    expect(hdr(m as RawFrame, "eventId")).toBe(sent);
    expect(JSON.parse(hdr(m as RawFrame, "event-plus") as string)).toMatchObject({
      height: expect.any(Number),
      txHash: expect.any(String),
    });
    expect(m?.body).toBe("to subscribers");
  });

  it("case 8: an event-format value with ':' and a newline comes back unchanged in MESSAGE and getEvent", async () => {
    const c = await client();
    const inbox = new Inbox();
    c.subscribe(T, inbox.take, { eventId: "OFFSET_LAST" });
    const value = "a:b\nc\\d";
    const receipts = new Inbox();
    c.watchForReceipt("r8", (f) => receipts.take(f as never));
    await new Promise((r) => setTimeout(r, 300));
    c.publish({ destination: T, body: "escaped", headers: { receipt: "r8", "event-format": value } });
    const [m] = await inbox.count(1);
    expect(m?.headers["event-format"]).toBe(value);
    expect((await getEvent(m?.headers.eventId as string)).extensions["event-format"]).toBe(value);
  });

  it("case 9: a list T,T2 is one subscription; events of both arrive; listSubscription shows [T, T2] as stomp", async () => {
    const r = await raw();
    const id = hdr(await subscribe(r, { destination: `${T},${T2}`, id: "9" }), "subscription-id") as string;
    const rec = (await listed()).find((x) => x.subscribeId === id);
    expect(rec).toMatchObject({ interfaceType: "stomp", topicName: `[${T}, ${T2}]`, groupId: "1", remoteIp: "127.0.0.1" });
    const s = await raw();
    await send(s, { destination: T, receipt: "1" }, "first");
    await send(s, { destination: T2, receipt: "2" }, "second");
    await r.until(() => messages(r, id).length >= 2);
    expect(messages(r, id).map((m) => [hdr(m, "destination"), m.body])).toEqual([
      [T, "first"],
      [T2, "second"],
    ]);
  });

  it("case 10: the pattern a/# is taken without matching topics; a/b is delivered, a is not (the M rule)", async () => {
    const r = await raw();
    const pattern = `${uniqueTopic("p")}/#`;
    expect((await subscribe(r, { destination: pattern, id: "p" })).command).toBe("RECEIPT");
    const id = hdr(await subscribe(r, { destination: "a/#", id: "10" }), "subscription-id") as string;
    const s = await raw();
    await send(s, { destination: "a", receipt: "1" }, "not me");
    await send(s, { destination: "a/b", receipt: "2" }, "me");
    await r.until(() => messages(r, id).length >= 1);
    await new Promise((res) => setTimeout(res, 500));
    expect(messages(r, id).map((m) => m.body)).toEqual(["me"]);
  });

  it("case 11: a missing topic → 100101 with receipt-id = id; a malformed pattern a+/b → 100109", async () => {
    const r = await raw();
    const missing = await subscribe(r, { destination: `${T},${uniqueTopic("gone")}`, id: "11" });
    expect(missing.headers).toEqual([
      ["message", "topic not exist"],
      ["code", "100101"],
      ["receipt-id", "11"],
      ["content-length", "0"],
    ]);
    expect(hdr(await subscribe(r, { destination: "a+/b", id: "12" }), "code")).toBe("100109");
  });

  it("case 12: start offsets are checked: abc and another topic's id 100302, 0 100307, a block above the head 100304, an unknown id 100303", async () => {
    const r = await raw();
    const sent = hdr(await send(r, { destination: T2, receipt: "x" }, "for offsets"), "eventId") as string;
    const [, seq, block] = sent.split("-");
    const codeOf = async (eventId: string) => hdr(await subscribe(r, { destination: T, id: "12", eventId }), "code");
    expect(await codeOf("abc")).toBe("100302");
    expect(await codeOf(sent)).toBe("100302");
    expect(await codeOf("0")).toBe("100307");
    expect(await codeOf("999999999")).toBe("100307");
    expect(await codeOf(`${topicHash8(T)}-1-${Number(block) + 1000}`)).toBe("100304");
    expect(await codeOf(`${topicHash8(T)}-${Number(seq) + 500}-${block}`)).toBe("100303");
  });

  it("case 13: after E1 → exactly E2 and E3 in order, then live events; OFFSET_FIRST → the whole history in order", async () => {
    const t = uniqueTopic("history");
    expectSuccess(await rest(base, "L", "open", { topic: t }), "L");
    const s = await raw();
    const ids: string[] = [];
    for (const body of ["E1", "E2", "E3"]) ids.push(hdr(await send(s, { destination: t, receipt: body }, body), "eventId") as string);
    const r = await raw();
    const after = hdr(await subscribe(r, { destination: t, id: "a", eventId: ids[0] as string }), "subscription-id") as string;
    const first = hdr(await subscribe(r, { destination: t, id: "f", eventId: "OFFSET_FIRST" }), "subscription-id") as string;
    await r.until(() => messages(r, after).length >= 2 && messages(r, first).length >= 3);
    expect((await send(s, { destination: t, receipt: "E4" }, "E4")).command).toBe("RECEIPT");
    await r.until(() => messages(r, after).length >= 3 && messages(r, first).length >= 4);
    expect(messages(r, after).map((m) => m.body)).toEqual(["E2", "E3", "E4"]);
    expect(messages(r, first).map((m) => m.body)).toEqual(["E1", "E2", "E3", "E4"]);
    expect(messages(r, first).map((m) => hdr(m, "eventId"))).toEqual([...ids, expect.any(String)]);
  });

  it("case 14: event-tag:x on SUBSCRIBE takes only events whose event-tag is x", async () => {
    const t = uniqueTopic("tags");
    expectSuccess(await rest(base, "L", "open", { topic: t }), "L");
    const r = await raw();
    const id = hdr(await subscribe(r, { destination: t, id: "14", "event-tag": "x" }), "subscription-id") as string;
    const s = await raw();
    await send(s, { destination: t, receipt: "1", "event-tag": "y" }, "tag y");
    await send(s, { destination: t, receipt: "2" }, "no tag");
    await send(s, { destination: t, receipt: "3", "event-tag": "x" }, "tag x");
    await r.until(() => messages(r, id).length >= 1);
    await new Promise((res) => setTimeout(res, 500));
    expect(messages(r, id).map((m) => m.body)).toEqual(["tag x"]);
  });

  it("case 15: event-subscriptionId abc → 100505; a live id → 100507; after UNSUBSCRIBE the same id is taken again", async () => {
    const r = await raw();
    expect(hdr(await subscribe(r, { destination: T, id: "1", "event-subscriptionId": "abc" }), "code")).toBe("100505");
    const id = hdr(await subscribe(r, { destination: T, id: "2" }), "subscription-id") as string;
    const other = await raw();
    const live = await subscribe(other, { destination: T, id: "3", "event-subscriptionId": id });
    expect(live.headers).toEqual([
      ["message", "subscriptionId is already exist, can not subscribe again"],
      ["code", "100507"],
      ["receipt-id", "3"],
      ["content-length", "0"],
    ]);
    const n = r.frames.length;
    r.send(frame("UNSUBSCRIBE", { id: "2" }));
    expect((await r.nth(n)).command).toBe("RECEIPT");
    const again = await subscribe(other, { destination: T, id: "4", "event-subscriptionId": id });
    expect(again.command).toBe("RECEIPT");
    expect(hdr(again, "subscription-id")).toBe(id);
  });

  it("case 16: UNSUBSCRIBE id:1 → RECEIPT receipt-id:1, no further MESSAGE, gone from listSubscription; an unknown id → ERROR with receipt-id only", async () => {
    const r = await raw();
    const id = hdr(await subscribe(r, { destination: T, id: "1" }), "subscription-id") as string;
    expect((await listed()).some((x) => x.subscribeId === id)).toBe(true);
    const n = r.frames.length;
    r.send(frame("UNSUBSCRIBE", { simpSubscriptionId: "1", subscription: id, id: "1" }));
    expect(await r.nth(n)).toEqual({ command: "RECEIPT", headers: [["receipt-id", "1"]], body: "" });
    await send(await raw(), { destination: T, receipt: "1" }, "after unsubscribe");
    await new Promise((res) => setTimeout(res, 1000));
    expect(messages(r, id)).toEqual([]);
    expect((await listed()).some((x) => x.subscribeId === id)).toBe(false);
    const m = r.frames.length;
    r.send(frame("UNSUBSCRIBE", { id: "nope" }));
    expect((await r.nth(m)).headers).toEqual([
      ["receipt-id", "nope"],
      ["content-length", "0"],
    ]);
  });

  it("case 17: DISCONNECT receipt:9 → RECEIPT receipt-id:9, then the server closes; the subscriptions are gone", async () => {
    const r = await raw();
    const id = hdr(await subscribe(r, { destination: T, id: "1" }), "subscription-id") as string;
    const n = r.frames.length;
    r.send(frame("DISCONNECT", { receipt: "9" }));
    expect(await r.nth(n)).toEqual({ command: "RECEIPT", headers: [["receipt-id", "9"]], body: "" });
    expect(await r.closed()).toBe(1000);
    expect((await listed()).some((x) => x.subscribeId === id)).toBe(false);
  });

  it("case 18: dropping the socket removes its subscriptions from listSubscription", async () => {
    const r = await raw();
    const id = hdr(await subscribe(r, { destination: T, id: "1" }), "subscription-id") as string;
    expect((await listed()).some((x) => x.subscribeId === id)).toBe(true);
    r.ws.terminate();
    const deadline = Date.now() + 10_000;
    while ((await listed()).some((x) => x.subscribeId === id)) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  it("case 19: ACK, NACK, BEGIN and STOMP → ERROR NOT SUPPORT COMMAND, then a close", async () => {
    for (const command of ["ACK", "NACK", "BEGIN", "STOMP"]) {
      const r = await raw();
      r.send(frame(command, { id: "5" }));
      const f = await r.nth(0);
      expect(f.command).toBe("ERROR");
      expect(hdr(f, "message")).toBe("NOT SUPPORT COMMAND");
      expect(hdr(f, "receipt-id")).toBe("5");
      await r.closed();
    }
  });

  it("case 20: a WebSocket ping is answered; four heart-beats without STOMP beats do not close a client that answers pings", async () => {
    const r = await raw();
    await r.connect();
    const pong = new Promise<void>((resolve) => r.ws.once("pong", () => resolve()));
    r.ws.ping();
    await pong;
    await new Promise((res) => setTimeout(res, 4_500));
    expect(r.closeCode).toBeNull();
    expect((await send(r, { destination: T, receipt: "alive" }, "still here")).command).toBe("RECEIPT");
  });

  it("a client that answers no pings is closed after two silent heart-beats", async () => {
    const r = await raw({ autoPong: false });
    await r.connect();
    expect(await r.closed(6_000)).toBe(1006);
  });
});
