import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { CONTEXT, expectBrokerError, expectJson200, expectSuccess, genericCodeOf, rest, uniqueTopic } from "./support/broker-expect.ts";
import type { CallResult } from "./support/http.ts";
import { type RawRequest, rawCall, rawExchange } from "./support/raw-http.ts";
import { TestSystem } from "./support/system.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };
/** Hang bound for the gateway's answers while a hostile request is in flight: generous, not a goal. */
const HANG_BOUND_MS = 5_000;
const TOO_MANY = /^more than 10000 (request parameters|multipart parts)/;

/** A multipart body of `fields` (name, value) with boundary "b0undary". */
function multipart(fields: [string, string][], tail = "--b0undary--\r\n"): string {
  const parts = fields.map(([n, v]) => `--b0undary\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`);
  return `${parts.join("")}${tail}`;
}
const MULTIPART = { "content-type": "multipart/form-data; boundary=b0undary" };

// Crash survived: none; hostile callers on a healthy system. Every request here froze the
// gateway's event loop, crashed a parser or got an empty or wrong answer before (issue 9).
describe("hostile requests", () => {
  let sys: TestSystem;
  let base: string;
  let topic: string;
  beforeAll(async () => {
    // The default BODY_LIMIT_BYTES (1 MiB): the bodies below are as large as a caller may send.
    sys = await TestSystem.start();
    base = sys.gatewayUrl;
    topic = uniqueTopic("hostile");
    await rest(base, "L", "open", { topic });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  /**
   * Sends `req` and, while it is in flight, asks /health: both must answer within the hang
   * bound. A parser that blocks the event loop for seconds fails here, whatever it answers.
   */
  async function withHealthAlongside(req: RawRequest): Promise<CallResult> {
    const hostile = rawCall(base, { ...req, timeoutMs: HANG_BOUND_MS });
    const health = await rawCall(base, { path: "/health", timeoutMs: HANG_BOUND_MS });
    expect(health.status, health.text).toBe(200);
    return hostile;
  }

  describe("one request no longer freezes the gateway", () => {
    it("a form body repeating one name 40,000 times (80 KB) is refused by the parameter limit while /health answers", async () => {
      const body = `topic=${topic}${"&a".repeat(40_000)}`;
      for (const v of ["L", "M", "E"] as const) {
        const r = await withHealthAlongside({ method: "POST", path: `${CONTEXT[v]}/rest/exist`, headers: FORM, body });
        expectBrokerError(r, v, genericCodeOf(v));
        expect((r.json as { message: string }).message).toMatch(TOO_MANY);
      }
    });

    it("a 1 MiB form body repeating one name is refused by the parameter limit while /health answers", async () => {
      const body = `topic=${topic}${"&a".repeat(524_000)}`;
      expect(body.length).toBeLessThan(1_048_576);
      const r = await withHealthAlongside({ method: "POST", path: `${CONTEXT.L}/rest/publish`, headers: FORM, body });
      expectBrokerError(r, "L", 200000);
      expect((r.json as { message: string }).message).toMatch(TOO_MANY);
    });

    it("a form body just under the parameter limit, all one name, is read: publish takes the first value", async () => {
      const body = `topic=${topic}&content=first${"&content=again".repeat(9_998)}`;
      const sent = expectJson200(await withHealthAlongside({ method: "POST", path: `${CONTEXT.M}/rest/publish`, headers: FORM, body }));
      expect(sent).toMatchObject({ status: "SUCCESS", topic });
      const ev = expectSuccess(await rest(base, "M", "getEvent", { eventId: (sent as { eventId: string }).eventId }), "M");
      expect(Buffer.from((ev as { content: string }).content, "base64").toString()).toBe("first");
    });

    it("a 1 MiB multipart body repeating one name is refused by the parameter limit while /health answers", async () => {
      const body = multipart([["topic", topic], ...Array.from({ length: 17_000 }, (): [string, string] => ["a", "1"])]);
      expect(body.length).toBeLessThan(1_048_576);
      const r = await withHealthAlongside({ method: "POST", path: `${CONTEXT.E}/rest/exist`, headers: MULTIPART, body });
      expectBrokerError(r, "E", 200203);
      expect((r.json as { message: string }).message).toMatch(TOO_MANY);
    });

    it("a query string repeating one name 127,000 times answers the parameter limit, not a stack overflow", async () => {
      const r = await withHealthAlongside({ path: `${CONTEXT.L}/rest/exist?topic=${topic}${"&a".repeat(127_000)}` });
      expectBrokerError(r, "L", 200000);
      expect((r.json as { message: string }).message).toMatch(TOO_MANY);
      expect(r.text).not.toMatch(/call stack/);
    });
  });

  describe("wrong answers", () => {
    const unreadable: [string, RawRequest][] = [
      ["malformed multipart", { method: "POST", path: "", headers: MULTIPART, body: multipart([["topic", "x"]], "") }],
      ["oversized form", { method: "POST", path: "", headers: FORM, body: `topic=x&content=${"a".repeat(1_100_000)}` }],
      ["too many parameters", { method: "POST", path: "", headers: FORM, body: "a&".repeat(10_001) }],
    ];

    it.each(unreadable)("an unknown path with a %s body is L's 404, not the parser's answer", async (_label, req) => {
      const r = await rawCall(base, { ...req, path: `${CONTEXT.L}/rest/foo` });
      expect(r.status, r.text).toBe(404);
      expect(r.json).toMatchObject({ status: 404, error: "Not Found", path: `${CONTEXT.L}/rest/foo` });
    });

    it.each(unreadable)("an unknown path with a %s body is M's and E's 200203 naming the path", async (_label, req) => {
      for (const v of ["M", "E"] as const) {
        const r = await rawCall(base, { ...req, path: `${CONTEXT[v]}/admin/nothing` });
        expectBrokerError(r, v, 200203, `No handler found for POST ${CONTEXT[v]}/admin/nothing`);
      }
    });

    it("E blockchaininfo ignores a groupId it does not take", async () => {
      for (const groupId of ["abc", "3", " "]) {
        const r = await rawCall(base, { path: `${CONTEXT.E}/admin/blockchaininfo?groupId=${encodeURIComponent(groupId)}` });
        expect(expectJson200(r)).toMatchObject({ blockNumber: expect.any(Number), nodeIdList: expect.any(Array) });
      }
    });

    it.each(["L", "M", "E"] as Variant[])("%s: a malformed multipart publish is publish's missing-parameter 100501", async (v) => {
      const body = multipart([
        ["topic", topic],
        ["content", "x"],
      ]).replace("--b0undary--\r\n", "--b0undary\r\nbroken");
      const r = await rawCall(base, { method: "POST", path: `${CONTEXT[v]}/rest/publish`, headers: MULTIPART, body });
      expectBrokerError(r, v, 100501, "invalid url format");
    });

    it("about 1,000 small headers are a JSON 431 that names the header count, not the byte limit", async () => {
      const headers = Object.fromEntries(Array.from({ length: 1_100 }, (_, i) => [`x-h${i}`, "1"]));
      const r = await rawCall(base, { path: `${CONTEXT.L}/rest/exist?topic=${topic}`, headers });
      expect(r.status).toBe(431);
      expect(r.contentType).toBe("application/json;charset=UTF-8");
      expect((r.json as { message: string }).message).toMatch(/more than 1000 header lines/);
      const fine = await rawCall(base, { path: `${CONTEXT.L}/rest/exist?topic=${topic}`, headers: { "x-few": "1" } });
      expect(fine.json).toEqual({ code: 0, message: "success", data: true });
    });

    it("defect 11(b): a multipart body of 19,407 repeated fields is told it has too many multipart parts", async () => {
      const body = multipart(Array.from({ length: 19_407 }, (): [string, string] => ["a", "1"]));
      const r = await rawCall(base, { method: "POST", path: `${CONTEXT.M}/rest/exist`, headers: MULTIPART, body });
      expectBrokerError(r, "M", 200203, "more than 10000 multipart parts; send fewer");
      // File parts count as parts too; fields with the query string over the request-wide limit say so.
      const files = Array.from(
        { length: 10_001 },
        (_, i) => `--b0undary\r\nContent-Disposition: form-data; name="f"; filename="${i}"\r\n\r\nx\r\n`,
      );
      const f = await rawCall(base, {
        method: "POST",
        path: `${CONTEXT.M}/rest/exist`,
        headers: MULTIPART,
        body: `${files.join("")}--b0undary--\r\n`,
      });
      expectBrokerError(f, "M", 200203, "more than 10000 multipart parts; send fewer");
      const q = await rawCall(base, {
        method: "POST",
        path: `${CONTEXT.M}/rest/exist?${"q=1&".repeat(10)}`,
        headers: MULTIPART,
        body: multipart(Array.from({ length: 9_995 }, (): [string, string] => ["a", "1"])),
      });
      expectBrokerError(q, "M", 200203, "more than 10000 request parameters (query string and body together); send fewer");
    });

    it.each(["x-bogus", "latin1", "utf-16be"])(
      "defect 11(e): a multipart text part declared as charset %s is read as UTF-8",
      async (charset) => {
        const head = (name: string) =>
          `--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: text/plain; charset=${charset}\r\n\r\n`;
        const body = Buffer.concat([
          Buffer.from(`${head("topic")}${topic}\r\n${head("content")}`),
          Buffer.from("中文 content", "utf8"),
          Buffer.from("\r\n--b0undary--\r\n"),
        ]);
        const sent = expectJson200(await rawCall(base, { method: "POST", path: `${CONTEXT.L}/rest/publish`, headers: MULTIPART, body }));
        expect(sent).toMatchObject({ status: "SUCCESS", topic });
        const ev = expectSuccess(await rest(base, "M", "getEvent", { eventId: (sent as { eventId: string }).eventId }), "M");
        expect(Buffer.from((ev as { content: string }).content, "base64").toString("utf8")).toBe("中文 content");
      },
    );

    it("defect 11(d): two Host headers are a JSON 400", async () => {
      const bytes = `GET ${CONTEXT.L}/rest/exist?topic=${topic} HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n`;
      const r = await rawExchange(base, bytes, HANG_BOUND_MS);
      expect(r.status, r.text).toBe(400);
      expect(r.text).toMatch(/\r\nContent-Type: application\/json;charset=UTF-8\r\n/i);
      expect(r.json).toMatchObject({ status: 400, message: "more than one Host header; send exactly one" });
    });

    it.each([
      ["gzip", "not gzip at all", "request body could not be read"],
      ["xyz", "topic=a", "request body has a Content-Encoding this gateway does not read; send it uncompressed"],
    ])("defect 10: a body with Content-Encoding %s answers a generic message, not the decoder's", async (encoding, body, what) => {
      for (const v of ["L", "M", "E"] as const) {
        const id = `defect10-${encoding}-${v}`;
        const r = await rawCall(base, {
          method: "POST",
          path: `${CONTEXT[v]}/rest/exist`,
          headers: { ...FORM, "content-encoding": encoding, "x-request-id": id },
          body,
        });
        expectBrokerError(r, v, genericCodeOf(v), `${what} (request id ${id}; the gateway log has the detail)`);
        const message = (r.json as { message: string }).message;
        expect(message).not.toMatch(/header check|unsupported content encoding/);
      }
    });

    it("defect 6: a malformed request pipelined after open and publish is answered after their answers", async () => {
      // The topic exists already: pipelined requests run concurrently, so the publish cannot rely on the open.
      const piped = topic;
      const get = (p: string) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`;
      for (const last of ["FOO@ / HTTP/1.1\r\nHost: x\r\n\r\n", "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"]) {
        const bytes = get(`${CONTEXT.M}/rest/open?topic=${piped}`) + get(`${CONTEXT.M}/rest/publish?topic=${piped}&content=x`) + last;
        const r = await rawExchange(base, bytes, 30_000);
        const statuses = [...r.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
        expect(statuses, r.text).toEqual([200, 200, last.startsWith("CONNECT") ? 405 : 400]);
        const bodies = r.text.split(/\r\n\r\n/).slice(1);
        expect(bodies[0]).toMatch(/^true/);
        expect(bodies[1]).toMatch(/^\{"status":"SUCCESS","topic":"/);
      }
    });

    it.each([
      ["without Host", `GET ${CONTEXT.L}/rest/exist?topic=a HTTP/1.1\r\n\r\n`, 400, /Host header/],
      ["with Expect: garbage", `GET ${CONTEXT.L}/rest/exist?topic=a HTTP/1.1\r\nHost: x\r\nExpect: garbage\r\n\r\n`, 417, /Expect/],
      ["with method CONNECT", "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", 405, /CONNECT is not served/],
    ])("a request %s gets a JSON answer, and the gateway keeps serving", async (_label, bytes, status, message) => {
      const r = await rawExchange(base, bytes, HANG_BOUND_MS);
      expect(r.status, r.text).toBe(status);
      expect(r.text).toMatch(/\r\nContent-Type: application\/json;charset=UTF-8\r\n/i);
      expect(r.json).toMatchObject({ status, message: expect.stringMatching(message) });
      expect(expectSuccess(await rest(base, "L", "exist", { topic }), "L")).toBe(true);
    });
  });
});
