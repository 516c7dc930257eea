import { describe, expect, it } from "vitest";
import { METHOD_NAMES, resolveCall } from "./jsonrpc-methods.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const raw = (r: ReturnType<typeof resolveCall>) =>
  "error" in r ? r.error : { path: r.path, raw: Object.fromEntries(r.raw), ext: r.extensions };

describe("resolveCall", () => {
  it("serves the seven methods of the original's clients, nothing else", () => {
    expect(METHOD_NAMES).toEqual(["open", "close", "exist", "state", "list", "getEvent", "publish"]);
    for (const m of ["subscribe", "unSubscribe", "setProducer", "hashCode", "toString", "constructor", "__proto__", "Open"]) {
      expect((resolveCall(m, ["t"]) as { error: { code: number } }).error.code, m).toBe(-32601);
    }
  });

  it("v1.0's named calls, with and without groupId", () => {
    expect(raw(resolveCall("open", { topic: "com.webank.weevent" }))).toEqual({
      path: "rest/open",
      raw: { topic: ["com.webank.weevent"] },
      ext: undefined,
    });
    expect(raw(resolveCall("open", { groupId: "2", topic: "t" }))).toMatchObject({ raw: { topic: ["t"], groupId: ["2"] } });
    expect(raw(resolveCall("list", { pageIndex: 0, pageSize: 10 }))).toEqual({
      path: "rest/list",
      raw: { pageIndex: ["0"], pageSize: ["10"] },
      ext: undefined,
    });
    expect(raw(resolveCall("getEvent", { eventId: "not exist" }))).toMatchObject({
      path: "rest/getEvent",
      raw: { eventId: ["not exist"] },
    });
    expect(raw(resolveCall("publish", { topic: "t", content: b64("hello world"), extensions: { "weevent-url": "https://x" } }))).toEqual({
      path: "rest/publish",
      raw: { topic: ["t"], content: ["hello world"] },
      ext: { "weevent-url": "https://x" },
    });
  });

  it("v1.1 and v1.2's positional calls; an empty or null groupId is the default group", () => {
    expect(raw(resolveCall("open", ["com.webank.weevent", ""]))).toMatchObject({ raw: { topic: ["com.webank.weevent"] } });
    expect(raw(resolveCall("list", [0, 10, "1"]))).toMatchObject({ raw: { pageIndex: ["0"], pageSize: ["10"], groupId: ["1"] } });
    expect(raw(resolveCall("state", ["com.weevent.test", null]))).toMatchObject({ raw: { topic: ["com.weevent.test"] } });
    expect(raw(resolveCall("publish", ["t", "1", b64("x"), { "event-format": "json" }]))).toMatchObject({
      raw: { topic: ["t"], groupId: ["1"], content: ["x"] },
      ext: { "event-format": "json" },
    });
  });

  it("tells publish's two three-argument forms apart by the third argument's type", () => {
    expect(raw(resolveCall("publish", ["t", b64("x"), { "event-a": "1" }]))).toMatchObject({
      raw: { topic: ["t"], content: ["x"] },
      ext: { "event-a": "1" },
    });
    expect(raw(resolveCall("publish", ["t", "2", b64("x")]))).toMatchObject({ raw: { topic: ["t"], groupId: ["2"], content: ["x"] } });
  });

  it("converts as the original did: scalars to text, null to an empty value the operation checks", () => {
    expect(raw(resolveCall("open", [12]))).toMatchObject({ raw: { topic: ["12"] } });
    expect(raw(resolveCall("open", [null]))).toMatchObject({ raw: { topic: [""] } });
    expect(raw(resolveCall("list", [null, "10"]))).toMatchObject({ raw: { pageIndex: [""], pageSize: ["10"] } });
    expect(raw(resolveCall("list", [1.5, 10]))).toMatchObject({ raw: { pageIndex: ["1.5"] } });
    expect(raw(resolveCall("publish", { topic: "t", content: [104, 105], extensions: null }))).toMatchObject({
      raw: { content: ["hi"] },
      ext: {},
    });
    expect(raw(resolveCall("publish", { topic: "t", content: b64("x"), extensions: { "event-n": 5, "event-z": null } }))).toMatchObject({
      ext: { "event-n": "5", "event-z": "" },
    });
  });

  it("keeps an extension key __proto__ as a key, for the operation to refuse", () => {
    const r = resolveCall("publish", JSON.parse(`{"topic":"t","content":"eA==","extensions":{"__proto__":"x"}}`)) as { extensions: object };
    expect(Object.keys({ ...r.extensions })).toEqual(["__proto__"]);
  });

  it("takes an idempotencyKey named after any publish form, positionally after the full one", () => {
    expect(raw(resolveCall("publish", { topic: "t", content: b64("x"), idempotencyKey: "k1" }))).toMatchObject({
      raw: { idempotencyKey: ["k1"] },
    });
    expect(raw(resolveCall("publish", ["t", "1", b64("x"), {}, "k2"]))).toMatchObject({ raw: { idempotencyKey: ["k2"] } });
  });

  it("-32602 for params that name no form, and arguments that cannot be converted, saying which forms there are", () => {
    const bad: [string, unknown][] = [
      ["open", undefined],
      ["open", []],
      ["open", ["a", "b", "c"]],
      ["open", { topic: "t", extra: 1 }],
      ["open", { name: "t" }],
      ["open", [{}]],
      ["list", [true, 10]],
      ["list", { pageIndex: [0], pageSize: 10 }],
      ["publish", ["t", "not base64!", {}]],
      ["publish", { topic: "t", content: Buffer.from([0xff, 0xfe]).toString("base64") }],
      ["publish", { topic: "t", content: b64("x"), extensions: { "event-a": { nested: 1 } } }],
      ["publish", ["t", b64("x"), "k3"]],
    ];
    for (const [m, p] of bad) {
      const r = resolveCall(m, p) as { error: { code: number; message: string } };
      expect(r.error?.code, `${m} ${JSON.stringify(p)}`).toBe(-32602);
      expect(r.error.message).toMatch(/^method parameters invalid: .*; \w+ takes \(/);
    }
    expect((resolveCall("publish", { topic: "t", content: b64("\u00ff") }) as { raw?: unknown }).raw).toBeDefined();
  });
});
