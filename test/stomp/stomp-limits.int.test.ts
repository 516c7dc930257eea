import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { frame, hdr, type RawFrame, RawStomp, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";

// Crash survived: none (hostile STOMP input on a healthy system, real sockets): each malformed
// frame or flood gets the protocol's ERROR and a close, and the gateway stays up and responsive.
let sys: TestSystem;
let base: string;
let url: string;
const open: RawStomp[] = [];
const T = uniqueTopic("stomplimits");

beforeAll(async () => {
  sys = await TestSystem.start({ gatewayEnv: { STOMP_HEARTBEAT_MS: "1000", STOMP_POLL_MS: "500", STOMP_MAX_FRAME_BYTES: "16384" } });
  base = sys.gatewayUrl;
  url = stompUrl(base);
  expectSuccess(await rest(base, "L", "open", { topic: T }), "L");
});
afterAll(async () => {
  for (const r of open) r.close();
  await sys?.stop();
});

const raw = async () => {
  const r = await RawStomp.open(url);
  open.push(r);
  return r;
};

describe("limits: malformed input gets an ERROR and a close, never a crash or a held loop", () => {
  const errorThenClose = async (text: string | Buffer, code = 1002) => {
    const r = await raw();
    r.send(frame("SEND", { destination: T, receipt: "before" }, "fine"));
    r.ws.send(text);
    const replies = await r.until((f) => f.some((x) => x.command === "ERROR")).catch(() => r.frames);
    expect(await r.closed()).toBe(code);
    return replies;
  };

  it("an undefined escape in a header: ERROR after the earlier frame's reply, then close 1002", async () => {
    const f = await errorThenClose(frame("SEND", { destination: "a\\qb", receipt: "x" }, "y"));
    expect(f.map((x) => x.command)).toEqual(["RECEIPT", "ERROR"]);
    expect(hdr(f[1] as RawFrame, "message")).toMatch(/malformed frame: an undefined escape/);
  });

  it("an unknown command, a header line without a colon, a missing NUL and a bad content-length each end the connection", async () => {
    for (const text of [
      "HELLO\n\n\u0000",
      "SEND\ndestination\n\nx\u0000",
      "SEND\ndestination:x\n\nno nul",
      "SEND\ncontent-length:99\n\nshort\u0000",
    ]) {
      const f = await errorThenClose(text);
      expect(f.at(-1)?.command, text).toBe("ERROR");
    }
  });

  it("a binary message closes with 1003; a message above STOMP_MAX_FRAME_BYTES closes with 1009", async () => {
    await errorThenClose(Buffer.from(frame("SEND", { destination: T }, "x")), 1003);
    await errorThenClose(frame("SEND", { destination: T, receipt: "big" }, "x".repeat(20_000)), 1009);
  });

  it("a flood of 20,000 frames is answered in order while /health keeps answering", async () => {
    const r = await raw();
    const burst = Array.from({ length: 500 }, (_, i) => frame("UNSUBSCRIBE", { id: `u${i}` })).join("");
    for (let i = 0; i < 40; i++) r.send(burst);
    let slowest = 0;
    const probing = (async () => {
      while (r.frames.length < 20_000 && r.closeCode === null) {
        const t0 = performance.now();
        expect((await fetch(`${base}/health`)).status).toBe(200);
        slowest = Math.max(slowest, performance.now() - t0);
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    await r.until((f) => f.length >= 20_000, 60_000);
    await probing;
    expect(r.frames.every((f, i) => f.command === "ERROR" && hdr(f, "receipt-id") === `u${i % 500}`)).toBe(true);
    // A bound of seconds, not a timing goal: a flood processed in one piece held the loop far longer.
    expect(slowest).toBeLessThan(2_000);
  });

  it("the gateway is still up and serving STOMP afterwards", async () => {
    expect(sys.exitedProcesses()).toEqual([]);
    const r = await raw();
    expect((await r.connect()).command).toBe("CONNECTED");
  });
});
