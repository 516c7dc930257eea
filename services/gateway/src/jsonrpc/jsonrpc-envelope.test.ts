import { describe, expect, it } from "vitest";
import { MAX_BATCH_CALLS, MAX_JSON_DEPTH, scanJson } from "./json-scan.ts";
import { getRequestText, parseBody, replyText, toEntry } from "./jsonrpc-envelope.ts";

const call = (id: unknown, method = "exist") => ({ id, jsonrpc: "2.0", method, params: ["t", "1"] });

describe("scanJson", () => {
  it("finds each call of a batch, commas and brackets inside strings included", async () => {
    const text = ' [ {"a":"x,]"} , [1,[2]] ,"s\\"]"] ';
    const scan = await scanJson(text);
    expect(scan.kind).toBe("batch");
    const calls = scan.kind === "batch" ? scan.calls.map(([s, e]) => JSON.parse(text.slice(s, e))) : [];
    expect(calls).toEqual([{ a: "x,]" }, [1, [2]], 's"]']);
  });

  it("an empty batch has no calls; a single request is not a batch", async () => {
    expect(await scanJson("[ ]")).toEqual({ kind: "batch", calls: [] });
    expect(await scanJson('{"id":1}')).toEqual({ kind: "single" });
  });

  it("refuses nesting past the limit and batches past the cap without reading on", async () => {
    expect((await scanJson("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).kind).toBe("batch");
    expect((await scanJson(`{"a":${"[".repeat(MAX_JSON_DEPTH)}`)).kind).toBe("too-deep");
    expect((await scanJson(`[${"1,".repeat(MAX_BATCH_CALLS - 1)}1]`)).kind).toBe("batch");
    // 10,000 calls: refused at the 101st, whatever follows (here not even JSON).
    expect((await scanJson(`[${"{},".repeat(10_000)}`)).kind).toBe("too-many-calls");
  });

  it("unbalanced brackets and text after the batch are malformed", async () => {
    for (const t of ["[1,2", "[1]]", "[1] x", "]"]) expect((await scanJson(t)).kind, t).toBe("malformed");
  });

  it("pauses on a long text", async () => {
    let pauses = 0;
    await scanJson(`["${"x".repeat(300_000)}"]`, async () => {
      pauses++;
    });
    expect(pauses).toBeGreaterThanOrEqual(4);
  });
});

describe("parseBody", () => {
  it("one request, a batch in order, and the errors that answer a body as a whole", async () => {
    expect(await parseBody(JSON.stringify(call("7")))).toEqual({
      batch: false,
      entry: { ok: true, call: { id: "7", notification: false, method: "exist", params: ["t", "1"] } },
    });
    const batch = await parseBody(JSON.stringify([call(1), { jsonrpc: "2.0", method: "exist", params: [] }, 5]));
    expect("entries" in batch && batch.entries.map((e) => (e.ok ? e.call.notification : e.error.code))).toEqual([false, true, -32600]);
    expect(await parseBody("{")).toEqual({ fatal: { code: -32700, message: "JSON parse error" } });
    expect(await parseBody("[1,]")).toEqual({ fatal: { code: -32700, message: "JSON parse error" } });
    expect(((await parseBody("[]")) as { fatal: { code: number } }).fatal.code).toBe(-32600);
    expect(((await parseBody("[".repeat(100_000))) as { fatal: { message: string } }).fatal.message).toMatch(/deeper than 32/);
    const big = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => call(i)));
    expect(((await parseBody(big)) as { fatal: { message: string } }).fatal.message).toMatch(/more than 100 calls/);
  });
});

describe("toEntry", () => {
  it("reads id, method and params; no id or a null id is a notification; jsonrpc may be absent", () => {
    expect(toEntry({ method: "open", params: { topic: "t" }, id: 0 })).toEqual({
      ok: true,
      call: { id: 0, notification: false, method: "open", params: { topic: "t" } },
    });
    expect(toEntry({ jsonrpc: "2.0", method: "open", id: null, params: null })).toEqual({
      ok: true,
      call: { id: null, notification: true, method: "open", params: undefined },
    });
  });

  it("refuses what is no call, keeping the id when it was readable", () => {
    const cases: [unknown, unknown][] = [
      [[1], null],
      ["x", null],
      [{ id: {}, method: "open" }, null],
      [JSON.parse('{"id":1e400,"method":"open"}'), null],
      [{ id: 2 ** 53, method: "open" }, null],
      [{ id: "a", jsonrpc: "1.0", method: "open" }, "a"],
      [{ id: "b", method: 5 }, "b"],
      [{ id: 3, method: "open", params: "t" }, 3],
    ];
    for (const [value, id] of cases) {
      const e = toEntry(value);
      expect(e.ok, JSON.stringify(value)).toBe(false);
      if (!e.ok) expect([e.id, e.error.code]).toEqual([id, -32600]);
    }
    expect(toEntry({ id: 1.5, method: "open" }).ok).toBe(true);
  });
});

describe("getRequestText", () => {
  const q = (o: Record<string, string>) => new Map(Object.entries(o).map(([k, v]) => [k, [v]]));
  it("builds the call a GET names, params as JSON or its Base64", () => {
    expect(JSON.parse(getRequestText(q({ method: "exist", id: "12", params: '["t"]' })) as string)).toEqual({
      jsonrpc: "2.0",
      id: 12,
      method: "exist",
      params: ["t"],
    });
    const b64 = Buffer.from('{"topic":"t"}').toString("base64");
    expect(JSON.parse(getRequestText(q({ method: "open", id: "x1", params: b64 })) as string)).toMatchObject({
      id: "x1",
      params: { topic: "t" },
    });
    expect(JSON.parse(getRequestText(q({ method: "open", id: "007" })) as string)).toMatchObject({ id: "007", params: [] });
    expect(JSON.parse(getRequestText(q({ method: "open" })) as string)).toMatchObject({ id: null });
    expect(getRequestText(new Map())).toBeNull();
  });
});

describe("replyText", () => {
  it("writes jsonrpc, id, then result or error, the id as sent", () => {
    expect(replyText("9", { result: true })).toBe('{"jsonrpc":"2.0","id":"9","result":true}');
    expect(replyText(null, { error: { code: -32700, message: "JSON parse error" } })).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"JSON parse error"}}',
    );
  });
});
