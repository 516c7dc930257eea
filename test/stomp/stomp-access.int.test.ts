import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { frame, hdr, RawStomp, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";

const BASIC = `Basic ${Buffer.from("ops:s3cret").toString("base64")}`;

// Crash survived: none (STOMP under the HTTP side's access settings).
describe("STOMP with credentials configured (API_BASIC_AUTH)", () => {
  let sys: TestSystem;
  let url: string;
  const topic = uniqueTopic("auth");
  const sockets: RawStomp[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({ gatewayEnv: { API_BASIC_AUTH: "ops:s3cret" } });
    url = stompUrl(sys.gatewayUrl);
    const opened = await fetch(`${sys.gatewayUrl}/event-broker/rest/open?topic=${topic}`, { headers: { authorization: BASIC } });
    expect(await opened.json()).toMatchObject({ code: 0 });
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await sys?.stop();
  });

  const open = async (headers: Record<string, string> = {}) => {
    const r = await RawStomp.open(url, { headers });
    sockets.push(r);
    return r;
  };
  const send = async (r: RawStomp, receipt: string) => {
    const n = r.frames.length;
    r.send(frame("SEND", { destination: topic, receipt }, "secret news"));
    return r.nth(n);
  };

  it("case 2: a wrong passcode → ERROR 'login or password is wrong' without receipt-id, the socket open; the right one → CONNECTED", async () => {
    const r = await open();
    const wrong = await r.connect({ login: "ops", passcode: "nope" });
    expect(wrong).toEqual({
      command: "ERROR",
      headers: [
        ["message", "login or password is wrong"],
        ["version", "1.1"],
      ],
      body: "",
    });
    expect(r.closeCode).toBeNull();
    expect((await r.connect({ login: "ops", passcode: "s3cret" })).command).toBe("CONNECTED");
    expect((await send(r, "after login")).command).toBe("RECEIPT");
  });

  it("a frame before a successful CONNECT is refused with its receipt-id, not stored", async () => {
    const r = await open();
    const f = await send(r, "early");
    expect(f.command).toBe("ERROR");
    expect(hdr(f, "receipt-id")).toBe("early");
    expect(hdr(f, "message")).toMatch(/not logged in/);
    const n = r.frames.length;
    r.send(frame("SUBSCRIBE", { destination: topic, id: "s" }));
    expect(hdr(await r.nth(n), "receipt-id")).toBe("s");
  });

  it("an Authorization header on the handshake logs the session in; a wrong one is refused with 401", async () => {
    const r = await open({ authorization: BASIC });
    expect((await send(r, "by header")).command).toBe("RECEIPT");
    await expect(RawStomp.open(url, { headers: { authorization: "Basic b3BzOndyb25n" } })).rejects.toThrow(/401/);
  });

  it("the HTTP side is unchanged: a request without credentials is 401", async () => {
    expect((await rest(sys.gatewayUrl, "L", "exist", { topic })).status).toBe(401);
    const ok = await fetch(`${sys.gatewayUrl}/event-broker/rest/exist?topic=${topic}`, { headers: { authorization: BASIC } });
    expect(
      expectSuccess({ status: ok.status, contentType: ok.headers.get("content-type") ?? "", text: "", json: await ok.json() }, "L"),
    ).toBe(true);
  });
});
