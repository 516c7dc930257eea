import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http.ts";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { E, L, M } from "./helpers.ts";

const err = (code: number, message: string) => ({ code, message });

// Crash survived: none (wire contract of subscribe, unSubscribe and listSubscription).
describe("subscribe / unSubscribe / listSubscription on the wire", () => {
  let sys: TestSystem;
  let rx: Receiver;
  let url: string;
  const sub = (params: Record<string, string>, mount = M) => call(sys.gatewayUrl, `${mount}/rest/subscribe`, params);
  const unsub = (params: Record<string, string>, mount = M) => call(sys.gatewayUrl, `${mount}/rest/unSubscribe`, params);

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", GROUP_IDS: "1,2" } });
    rx = await Receiver.start();
    url = rx.url();
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("exists in M and E only; L answers as for an unknown path", async () => {
    expect((await sub({ topic: "t", url }, L)).status).toBe(404);
    expect((await unsub({ subscriptionId: "x" }, L)).status).toBe(404);
  });

  it("answers the new id as raw unquoted text, and the same id when a live subscription is continued", async () => {
    for (const mount of [M, E]) {
      const r = await sub({ topic: "wire", url }, mount);
      expect(r.status).toBe(200);
      expect(r.contentType).toBe("text/plain;charset=UTF-8");
      expect(r.text).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect((await sub({ topic: "wire", url, subscriptionId: r.text }, mount)).text).toBe(r.text);
    }
    const chosen = randomUUID();
    expect((await sub({ topic: "wire", url, subscriptionId: chosen })).text).toBe(chosen);
    expect((await sub({ topic: "a/+/c", url, subscriptionId: "" })).text).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("checks parameters, URL, connectivity, group, id and topic in the reference's order", async () => {
    const closed = "http://127.0.0.1:1/cb";
    const cases: [Record<string, string>, string, { code: number; message: string }][] = [
      [{ url }, M, err(200203, "Required String parameter 'topic' is not present")],
      [{ topic: "t" }, E, err(200203, "Required String parameter 'url' is not present")],
      [{ topic: "", url: "not a url" }, M, err(100501, "invalid url format")],
      [{ topic: "t", url: "ftp://127.0.0.1/x" }, M, err(100501, "invalid url format")],
      [{ topic: "", url: closed }, M, err(100502, "failed to connect url")],
      [{ topic: "", url, groupId: "9", subscriptionId: "bad" }, M, err(200211, "unknown group id")],
      [{ topic: "", url, groupId: "abc", subscriptionId: "bad" }, E, err(100306, "event group id should be a string start from 1")],
      [{ topic: "", url, groupId: "9", subscriptionId: "bad" }, E, err(100505, "subscribe id format invalid")],
      [{ topic: "", url, subscriptionId: "bad" }, M, err(100505, "subscribe id format invalid")],
      [{ topic: "  ", url }, M, err(100103, "topic name is blank")],
      [{ topic: "x".repeat(65), url }, E, err(100102, "topic name exceeds max length[64 bytes]")],
      [{ topic: "a/", url }, M, err(100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)")],
      [{ topic: "中/#", url }, M, err(100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)")],
      [{ topic: "a/b+", url }, M, err(100109, "invalid topic pattern")],
      [{ topic: "a/#/b", url }, E, err(100109, "invalid topic pattern")],
      [{ topic: "t", url, groupId: "9" }, E, err(200211, "unknown group id")],
    ];
    for (const [params, mount, expected] of cases) {
      expect((await sub(params, mount)).json, `${mount} ${JSON.stringify(params)}`).toEqual(expected);
    }
  });

  it("callback URLs have no length limit: a URL over 2048 characters answers 100501", async () => {
    const long = `${url}?pad=${"a".repeat(2100)}`;
    expect((await sub({ topic: "t", url: long }, M)).json).toEqual(err(100501, "invalid url format"));
    expect((await sub({ topic: "t", url: long }, E)).json).toEqual(err(100501, "invalid url format"));
    expect(rx.requests).toHaveLength(0);
  });

  it("defect 9: the URL cap applies to the URL as stored: 2,043 characters that encode to 18,000 answer 100501", async () => {
    const wide = `${url}?q=${"世".repeat(2043 - url.length - 3)}`;
    expect(wide.length).toBeLessThanOrEqual(2048);
    expect((await sub({ topic: "t", url: wide }, M)).json).toEqual(err(100501, "invalid url format"));
    expect((await sub({ topic: "t", url: wide }, E)).json).toEqual(err(100501, "invalid url format"));
  });

  it("ids are exact: a padded id is not a UUID (100505) and names no subscription (100504); NUL is 'not found'", async () => {
    const id = (await sub({ topic: "exact", url })).text;
    expect((await sub({ topic: "exact", url, subscriptionId: ` ${id}` })).json).toEqual(err(100505, "subscribe id format invalid"));
    expect((await unsub({ subscriptionId: `${id} ` })).json).toEqual(err(100504, "subscribe id is not exist"));
    expect((await unsub({ subscriptionId: "a\u0000b" })).json).toEqual(err(100504, "subscribe id is not exist"));
    const listed = await call(sys.gatewayUrl, "/event-broker/admin/listSubscription", { nodeInstances: "a\u0000b:1" });
    expect(listed.json).toEqual({ code: 0, message: "success", data: { "a\u0000b:1": [] } });
    // A UUID in upper case is the same UUID; the id is kept and answered in canonical form.
    expect((await sub({ topic: "exact", url, subscriptionId: id.toUpperCase() })).text).toBe(id);
    expect((await unsub({ subscriptionId: id.toUpperCase() })).text).toBe("true");
  });

  it("refuses to continue a live id with another topic or group (100108, per variant's message)", async () => {
    const id = (await sub({ topic: "first", url })).text;
    expect((await sub({ topic: "second", url, subscriptionId: id })).json).toEqual(err(100108, "topic name not match with last subscribe"));
    expect((await sub({ topic: "first", url, subscriptionId: id, groupId: "2" })).json).toEqual(
      err(100108, "topic name not match with last subscribe"),
    );
    expect((await sub({ topic: "second", url, subscriptionId: id }, E)).json).toEqual(err(100108, "topic name not match with last"));
  });

  it("unSubscribe: missing, blank, unknown, live", async () => {
    expect((await unsub({})).json).toEqual(err(200203, "Required String parameter 'subscriptionId' is not present"));
    expect((await unsub({ subscriptionId: " " }, E)).json).toEqual(err(100503, "subscribe interface subscription id is blank"));
    expect((await unsub({ subscriptionId: "no-such-id" })).json).toEqual(err(100504, "subscribe id is not exist"));
    const id = (await sub({ topic: "gone", url })).text;
    const r = await unsub({ subscriptionId: id });
    expect(r.text).toBe("true");
    expect((await unsub({ subscriptionId: id }, E)).json).toEqual(err(100504, "subscribe id is not exist"));
  });

  it("listSubscription in each variant's shape", async () => {
    const id = (await sub({ topic: "listed", url, groupId: "2" })).text;
    const eList = (await call(sys.gatewayUrl, `${E}/admin/listSubscription`, { groupId: "2" })).json as Record<
      string,
      Record<string, object>
    >;
    const node = Object.keys(eList).find((n) => eList[n]?.[id]) as string;
    expect(node).toMatch(/^127\.0\.0\.1:\d+$/);
    const eRec = eList[node]?.[id] as Record<string, string>;
    expect(Object.keys(eRec)).toEqual([
      "interfaceType",
      "notifiedEventCount",
      "notifyingEventCount",
      "notifyTimeStamp",
      "topicName",
      "subscribeId",
    ]);
    expect(eRec).toMatchObject({
      interfaceType: "restful",
      notifiedEventCount: "0",
      notifyingEventCount: "0",
      topicName: "listed",
      subscribeId: id,
    });
    expect(eRec.notifyTimeStamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    const nine = [...Object.keys(eRec), "remoteIp", "createTimeStamp", "groupId"];
    const m = (await call(sys.gatewayUrl, `${M}/admin/listSubscription`, { nodeIp: node, groupId: "2" })).json as {
      code: number;
      message: string;
      data: Record<string, Record<string, Record<string, string>>>;
    };
    expect(Object.keys(m)).toEqual(["code", "message", "data"]);
    expect(Object.keys(m.data[node]?.[id] ?? {})).toEqual(nine);
    expect(m.data[node]?.[id]).toMatchObject({ groupId: "2", remoteIp: "127.0.0.1" });
    const alias = (await call(sys.gatewayUrl, `${M}/admin/listSubscription`, { nodeInstances: node, groupId: "2" })).json as typeof m;
    expect(alias.data[node]?.[id]?.subscribeId).toBe(id);

    const l = (await call(sys.gatewayUrl, `${L}/admin/listSubscription`, { nodeInstances: `${node},10.9.9.9:1`, groupId: "2" })).json as {
      data: Record<string, Record<string, string>[]>;
    };
    expect(l.data[node]?.map((r) => r.subscribeId)).toEqual([id]);
    expect(Object.keys(l.data[node]?.[0] ?? {})).toEqual(nine);
    expect(l.data["10.9.9.9:1"]).toEqual([]);
    // Group 1 does not hold it.
    const l1 = (await call(sys.gatewayUrl, `${L}/admin/listSubscription`, { nodeInstances: node })).json as typeof l;
    expect(l1.data[node]?.map((r) => r.subscribeId)).not.toContain(id);

    expect((await call(sys.gatewayUrl, `${L}/admin/listSubscription`)).json).toEqual({
      ...err(200000, "Required String parameter 'nodeInstances' is not present"),
      data: null,
    });
    expect((await call(sys.gatewayUrl, `${L}/admin/listSubscription`, { nodeInstances: " " })).json).toEqual({
      ...err(200001, "invalid input param"),
      data: null,
    });
    expect((await call(sys.gatewayUrl, `${L}/admin/listSubscription`, { nodeInstances: node, groupId: "7" })).json).toEqual({
      ...err(200211, "unknown group id"),
      data: null,
    });
    expect((await call(sys.gatewayUrl, `${M}/admin/listSubscription`)).json).toEqual(
      err(200203, "Required String parameter 'nodeIp' is not present"),
    );
    expect((await call(sys.gatewayUrl, `${M}/admin/listSubscription`, { nodeIp: "" })).json).toEqual(err(-1, "node ipList is null."));
  });
});

// Crash survived: none (outbound safety at subscribe time, default policy: public addresses only).
describe("subscribe refuses internal callback addresses by default", () => {
  let sys: TestSystem;
  let rx: Receiver;

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { CALLBACK_ALLOWED_CIDRS: "" } });
    rx = await Receiver.start();
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("refuses loopback, metadata, private, IPv6 loopback, mapped and a name resolving to loopback with 100502", async () => {
    const port = new URL(rx.url()).port;
    const refused = [
      rx.url(),
      `http://localhost:${port}/cb`,
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.5:8080/cb",
      "http://192.168.1.1/cb",
      `http://[::1]:${port}/cb`,
      `http://[::ffff:127.0.0.1]:${port}/cb`,
      "http://0.0.0.0:80/cb",
    ];
    for (const url of refused) {
      expect((await call(sys.gatewayUrl, `${M}/rest/subscribe`, { topic: "t", url })).json, url).toEqual(
        err(100502, "failed to connect url"),
      );
    }
    // Refused before any connection is made: the receiver saw nothing.
    expect(rx.requests).toHaveLength(0);
  });
});
