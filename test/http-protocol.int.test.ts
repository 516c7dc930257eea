import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { CONTEXT, expectBrokerError, expectJson200, expectSuccess, genericCodeOf, rest, uniqueTopic } from "./support/broker-expect.ts";
import type { CallResult } from "./support/http.ts";
import { rawCall } from "./support/raw-http.ts";
import { TestSystem } from "./support/system.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

/** Anything but a 5xx, a hang or a crash: an HTTP 200 JSON broker reply (or L's 404 JSON). */
function expectHandled(r: CallResult): void {
  expect(r.status, r.text).toBeLessThan(500);
  expect(r.contentType).toBe("application/json;charset=UTF-8");
  expect(r.json, r.text).toBeDefined();
}

// Crash survived: none (transport rules of behaviour.md 1 and 2 on a healthy system).
describe("HTTP protocol rules", () => {
  let sys: TestSystem;
  let base: string;
  let topic: string;
  beforeAll(async () => {
    sys = await TestSystem.start({ env: { BODY_LIMIT_BYTES: "65536" } });
    base = sys.gatewayUrl;
    topic = uniqueTopic("proto");
    await rest(base, "L", "open", { topic });
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const path = (v: Variant, op: string, qs = "") => `${CONTEXT[v]}/rest/${op}${qs}`;

  describe("methods and where parameters come from", () => {
    it.each(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"])("%s with the query string works", async (method) => {
      const r = await rawCall(base, { method, path: path("L", "exist", `?topic=${encodeURIComponent(topic)}`) });
      expect(r.json).toEqual({ code: 0, message: "success", data: true });
    });

    it.each(["POST", "PUT", "DELETE", "PATCH"])("%s with a form body works", async (method) => {
      const r = await rawCall(base, { method, path: path("M", "exist"), headers: FORM, body: `topic=${encodeURIComponent(topic)}` });
      expect(expectSuccess(r, "M")).toBe(true);
    });

    it.each(["GET", "OPTIONS"])("%s does not read a form body, as the original did not", async (method) => {
      const r = await rawCall(base, { method, path: path("M", "exist"), headers: FORM, body: `topic=${encodeURIComponent(topic)}` });
      expectBrokerError(r, "M", 200203, "Required String parameter 'topic' is not present");
    });

    it("merges query-string and form-body parameters", async () => {
      const r = await rawCall(base, {
        method: "POST",
        path: path("L", "publish", `?topic=${encodeURIComponent(topic)}`),
        headers: { "content-type": "application/x-www-form-urlencoded;charset=UTF-8" },
        body: "content=merged&event-from=body",
      });
      const sent = expectJson200(r) as { status: string; eventId: string };
      expect(sent.status).toBe("SUCCESS");
      const ev = expectSuccess(await rest(base, "M", "getEvent", { eventId: sent.eventId }), "M") as Record<string, unknown>;
      expect(ev).toMatchObject({ topic, content: Buffer.from("merged").toString("base64"), extensions: { "event-from": "body" } });
    });

    it("a parameter after the 1000th is still read (query string and form body)", async () => {
      const filler = Array.from({ length: 1200 }, (_, i) => `x${i}=1`).join("&");
      const q = await rawCall(base, { method: "GET", path: path("L", "exist", `?${filler}&topic=${encodeURIComponent(topic)}`) });
      expect(q.json).toEqual({ code: 0, message: "success", data: true });
      const f = await rawCall(base, {
        method: "POST",
        path: path("L", "exist"),
        headers: FORM,
        body: `${filler}&topic=${encodeURIComponent(topic)}`,
      });
      expect(f.json).toEqual({ code: 0, message: "success", data: true });
    });

    it("ignores a JSON body, as if its parameters were missing", async () => {
      const json = { "content-type": "application/json" };
      const exist = await rawCall(base, { method: "POST", path: path("E", "exist"), headers: json, body: JSON.stringify({ topic }) });
      expectBrokerError(exist, "E", 200203, "Required String parameter 'topic' is not present");
      const pub = await rawCall(base, {
        method: "POST",
        path: path("L", "publish"),
        headers: json,
        body: JSON.stringify({ topic, content: "x" }),
      });
      expectBrokerError(pub, "L", 100501, "invalid url format");
    });

    // Regression: multipart/form-data bodies were not read at all (every parameter "missing"),
    // where the original's multipart resolver made their text fields request parameters.
    it("reads the text fields of a multipart/form-data body, merged with the query string", async () => {
      const form = new FormData();
      form.append("content", "多部分 multipart");
      form.append("event-part", "yes");
      form.append("event-file", new Blob(["file parts are not parameters"]), "f.txt");
      const res = await fetch(`${base}${path("L", "publish", `?topic=${encodeURIComponent(topic)}`)}`, { method: "POST", body: form });
      const sent = (await res.json()) as { status: string; eventId: string };
      expect(sent.status).toBe("SUCCESS");
      const ev = expectSuccess(await rest(base, "M", "getEvent", { eventId: sent.eventId }), "M") as {
        content: string;
        extensions: object;
      };
      expect(Buffer.from(ev.content, "base64").toString("utf8")).toBe("多部分 multipart");
      expect(ev.extensions).toEqual({ "event-part": "yes" });
    });

    it("answers a malformed multipart body with the generic code", async () => {
      const r = await rawCall(base, {
        method: "POST",
        path: path("M", "exist"),
        headers: { "content-type": "multipart/form-data; boundary=xyz" },
        body: '--xyz\r\nContent-Disposition: form-data; name="topic"\r\n\r\nunterminated',
      });
      expectBrokerError(r, "M", 200203);
    });

    it("does not read bodies of other content types", async () => {
      const r = await rawCall(base, {
        method: "POST",
        path: path("M", "exist"),
        headers: { "content-type": "text/plain" },
        body: `topic=${topic}`,
      });
      expectBrokerError(r, "M", 200203, "Required String parameter 'topic' is not present");
    });

    it("decodes + as a space, so a wildcard + must be sent as %2B", async () => {
      const spaced = `${topic}+x`;
      expect(expectSuccess(await rawCall(base, { path: path("L", "open", `?topic=${spaced}`) }), "L")).toBe(true);
      const state = expectSuccess(await rest(base, "L", "state", { topic: `${topic} x` }), "L") as { topicName: string };
      expect(state.topicName).toBe(`${topic} x`);
      expectBrokerError(await rawCall(base, { path: path("L", "open", `?topic=${topic}%2Bx`) }), "L", 100106);
    });

    it("tolerates a trailing slash, not a suffix", async () => {
      const q = `?topic=${encodeURIComponent(topic)}`;
      expect((await rawCall(base, { path: `${path("L", "exist")}/${q}` })).json).toEqual({ code: 0, message: "success", data: true });
      expect(expectSuccess(await rawCall(base, { path: `${path("E", "exist")}/${q}` }), "E")).toBe(true);
      expect((await rawCall(base, { path: path("M", "exist.json", q) })).json).toEqual({
        code: 200203,
        message: `No handler found for GET ${CONTEXT.M}/rest/exist.json`,
      });
    });

    it("ignores ;jsessionid= path parameters, as the original's path matching did", async () => {
      const q = `?topic=${encodeURIComponent(topic)}`;
      const r = await rawCall(base, { path: `${path("L", "exist")};jsessionid=0A1B2C${q}` });
      expect(r.json).toEqual({ code: 0, message: "success", data: true });
    });
  });

  describe("reply shapes and types", () => {
    it("every failure is HTTP 200 JSON with a numeric code, keys in order", async () => {
      for (const v of ["L", "M", "E"] as const) {
        expectBrokerError(await rest(base, v, "state"), v, genericCodeOf(v), "Required String parameter 'topic' is not present");
        expectBrokerError(await rest(base, v, "state", { topic: uniqueTopic("nope") }), v, 100101, "topic not exist");
      }
    });

    it("a non-integer page parameter is the generic code with Spring's conversion message", async () => {
      for (const v of ["L", "M", "E"] as const) {
        expectBrokerError(
          await rest(base, v, "list", { pageIndex: "0", pageSize: "ten" }),
          v,
          genericCodeOf(v),
          `Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: "ten"`,
        );
      }
    });

    // Regression: integers were trimmed with JavaScript's \s, which also strips no-break spaces
    // that Java's trimAllWhitespace keeps (so "1\u00a0" was accepted), and the conversion
    // message quoted the untrimmed value where Java quotes the trimmed one.
    it("page parameters are trimmed of Java whitespace only, and the message quotes the trimmed value", async () => {
      const page = await rest(base, "L", "list", { pageIndex: " 0\t", pageSize: "\n10 " });
      expect(page.json).toMatchObject({ code: 0, data: { pageIndex: 0 } });
      const spring = (input: string) =>
        `Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: "${input}"`;
      expectBrokerError(await rest(base, "L", "list", { pageIndex: " x y ", pageSize: "10" }), "L", 200000, spring("xy"));
      expectBrokerError(await rest(base, "M", "list", { pageIndex: "1\u00a0", pageSize: "10" }), "M", 200203, spring("1\u00a0"));
      // Empty converts to null (the operation's own 100104); whitespace alone does not.
      expectBrokerError(
        await rest(base, "L", "list", { pageIndex: "", pageSize: "10" }),
        "L",
        100104,
        "page index should be an integer start from 0",
      );
      expectBrokerError(await rest(base, "L", "list", { pageIndex: " ", pageSize: "10" }), "L", 200000, spring(""));
    });

    it("success envelopes (L) and bare replies (M, E) use the documented key order", async () => {
      const l = await rest(base, "L", "exist", { topic });
      expect(Object.keys(l.json as object)).toEqual(["code", "message", "data"]);
      expect(l.text).toBe('{"code":0,"message":"success","data":true}');
      expect((await rest(base, "M", "exist", { topic })).text).toBe("true");
      const pub = await rest(base, "L", "publish", { topic, content: "x" }, "POST");
      expect(Object.keys(pub.json as object)).toEqual(["status", "topic", "eventId"]);
    });
  });

  describe("unknown paths (behaviour.md 1.4)", () => {
    it("L answers 404 with the framework's error JSON", async () => {
      const r = await rawCall(base, { path: `${CONTEXT.L}/rest/foo?topic=x` });
      expect(r.status).toBe(404);
      expect(r.contentType).toBe("application/json;charset=UTF-8");
      const body = r.json as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(["timestamp", "status", "error", "message", "path"]);
      expect(body).toMatchObject({ status: 404, error: "Not Found", message: "No message available", path: `${CONTEXT.L}/rest/foo` });
      // Regression: the timestamp was ISO with "Z"; the framework wrote a "+0000" offset.
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000$/);
    });

    it("L has no subscribe: 404", async () => {
      expect((await rawCall(base, { path: `${CONTEXT.L}/rest/subscribe?topic=a&url=http://127.0.0.1:1/` })).status).toBe(404);
    });

    it.each(["M", "E"] as const)("%s answers 200 with code 200203 naming the method and path without the query", async (v) => {
      for (const [method, p] of [
        ["GET", `${CONTEXT[v]}/rest/foo`],
        ["POST", `${CONTEXT[v]}/rest/foo`],
        ["PUT", `${CONTEXT[v]}/admin/nothing`],
        ["GET", `${CONTEXT[v]}/rest/Open`],
      ] as const) {
        const r = await rawCall(base, { method, path: `${p}?topic=x`, ...(method === "GET" ? {} : { headers: FORM, body: "a=b" }) });
        expect(expectJson200(r)).toEqual({ code: 200203, message: `No handler found for ${method} ${p}` });
      }
    });

    // Regression: express matched mount paths case-insensitively, so /EVENT-BROKER/rest/open
    // was served although the original's context path (like its operation names) is exact.
    it("context paths are case-sensitive", async () => {
      const r = await rawCall(base, { path: `${CONTEXT.L.toUpperCase()}/rest/exist?topic=a` });
      expect(r.status).toBe(404);
      expect((await rawCall(base, { path: "/Event-M/rest/exist?topic=a" })).status).toBe(404);
    });

    it("a path outside every mount is a 404 JSON", async () => {
      const r = await rawCall(base, { path: "/nothing/here" });
      expect(r.status).toBe(404);
      expect(r.json).toMatchObject({ status: 404 });
    });
  });

  describe("hostile input never gives a 5xx", () => {
    it.each([
      ["a bad escape", "?topic=%zz"],
      ["a lone %", "?topic=%"],
      ["truncated UTF-8", "?topic=%E4%B8"],
      ["an invalid UTF-8 byte", "?topic=%FF%FE"],
      ["an encoded NUL", "?topic=a%00b"],
      ["a bad escape in the name", "?to%zzpic=a"],
    ])("query with %s", async (_label, qs) => {
      for (const v of ["L", "M", "E"] as const) expectHandled(await rawCall(base, { path: path(v, "open", qs) }));
    });

    it("a topic with an invalid UTF-8 sequence is rejected as an invalid character", async () => {
      // The replacement character U+FFFD is outside [32, 128].
      expectBrokerError(await rawCall(base, { path: path("L", "exist", "?topic=a%FFb") }), "L", 100106);
    });

    it.each([
      ["a bad escape", "topic=%zz&content=x"],
      ["truncated UTF-8", `topic=${encodeURIComponent(topic)}&content=%E4%B8`],
      ["raw invalid bytes", Buffer.from([0x74, 0x6f, 0x70, 0x69, 0x63, 0x3d, 0xff, 0xfe, 0x26, 0x63, 0x3d, 0x80])],
    ])("form body with %s", async (_label, body) => {
      for (const v of ["L", "M", "E"] as const) {
        expectHandled(await rawCall(base, { method: "POST", path: path(v, "publish"), headers: FORM, body }));
      }
    });

    it("malformed escapes in the path", async () => {
      const l = await rawCall(base, { path: `${CONTEXT.L}/rest/%zz` });
      expect(l.status).toBe(404);
      expectHandled(await rawCall(base, { path: `${CONTEXT.M}/rest/%zz` }));
      expectHandled(await rawCall(base, { path: `${CONTEXT.E}/rest/open%` }));
      expectHandled(await rawCall(base, { path: `/%zz/rest/open` }));
    });

    // Regression: body-parser rejected every charset but UTF-8 and ISO-8859-1 (generic error
    // "unsupported charset") and decoded ISO-8859-1 escapes as Latin-1, where the original forced
    // UTF-8 on every request (Spring Boot's CharacterEncodingFilter) whatever the client declared.
    it.each(["latin1", "ISO-8859-1", "utf-16", "nonsense"])("a form body declared as charset %s is read as UTF-8", async (charset) => {
      for (const v of ["L", "M", "E"] as const) {
        const r = await rawCall(base, {
          method: "POST",
          path: path(v, "exist"),
          headers: { "content-type": `application/x-www-form-urlencoded; charset=${charset}` },
          body: `topic=${topic}`,
        });
        expect(expectSuccess(r, v)).toBe(true);
      }
      const pub = await rawCall(base, {
        method: "POST",
        path: path("L", "publish"),
        headers: { "content-type": `application/x-www-form-urlencoded; charset=${charset}` },
        body: `topic=${topic}&content=%E4%B8%AD`,
      });
      const eventId = (expectJson200(pub) as { eventId: string }).eventId;
      const ev = expectSuccess(await rest(base, "M", "getEvent", { eventId }), "M") as { content: string };
      expect(Buffer.from(ev.content, "base64").toString("utf8")).toBe("中");
    });

    it("a malformed content-type header is answered", async () => {
      const r = await rawCall(base, {
        method: "POST",
        path: path("L", "exist"),
        headers: { "content-type": "application/x-www-form-urlencoded; ===" },
        body: "topic=a",
      });
      expectHandled(r);
    });

    it("a very long query string is answered", async () => {
      const r = await rawCall(base, { path: path("M", "exist", `?topic=${"a".repeat(8000)}`) });
      expectBrokerError(r, "M", 100102);
    });

    it("a GET publish of the largest content, in Chinese, is taken (a 92 KB query string)", async () => {
      const content = "中".repeat(10240);
      const qs = `?topic=${encodeURIComponent(topic)}&content=${encodeURIComponent(content)}`;
      const sent = expectJson200(await rawCall(base, { path: path("L", "publish", qs) })) as { status: string; eventId: string };
      expect(sent.status).toBe("SUCCESS");
      const ev = expectSuccess(await rest(base, "L", "getEvent", { eventId: sent.eventId }), "L") as { content: string };
      expect(Buffer.from(ev.content, "base64").toString("utf8")).toBe(content);
      // One character more is the broker's own content rule, not a transport error.
      const over = await rawCall(base, { path: path("L", "publish", `${qs}${encodeURIComponent("中")}`) });
      expectBrokerError(over, "L", 100201);
    });

    it("a publish body over BODY_LIMIT_BYTES is the content rule's 100201; another operation's says which limit", async () => {
      // BODY_LIMIT_BYTES is 65536 here: 70 000 characters of content cannot be read, and are far over 10240.
      const body = `topic=${encodeURIComponent(topic)}&content=${"a".repeat(70_000)}`;
      for (const v of ["L", "M", "E"] as const) {
        const r = await rawCall(base, { method: "POST", path: path(v, "publish"), headers: FORM, body });
        expectBrokerError(r, v, 100201, "event content exceeds max length[10k bytes]");
      }
      const other = await rawCall(base, { method: "POST", path: path("M", "exist"), headers: FORM, body });
      expectBrokerError(other, "M", 200203);
      expect((other.json as { message: string }).message).toMatch(/BODY_LIMIT_BYTES/);
    });

    it("a request head too large for the server is a JSON 431 that says to POST", async () => {
      const r = await rawCall(base, { path: path("L", "publish", `?topic=${topic}&content=${"a".repeat(300_000)}`) });
      expect(r.status).toBe(431);
      expect(r.contentType).toBe("application/json;charset=UTF-8");
      expect((r.json as { message: string }).message).toMatch(/POST form body/);
    });

    it("malformed HTTP is a JSON 400, and the server keeps serving", async () => {
      const answer = await new Promise<string>((resolve, reject) => {
        const url = new URL(base);
        const socket = connect(Number(url.port), url.hostname, () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
        let text = "";
        socket.on("data", (d) => {
          text += d.toString();
        });
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/"message":"malformed HTTP request/);
      expect(expectSuccess(await rest(base, "L", "exist", { topic }), "L")).toBe(true);
    });
  });
});
