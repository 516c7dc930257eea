import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http.ts";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { E, M, openTopic, publish } from "./helpers.ts";

// Crash survived: none. Webhooks as receivers want them, on the real stack with real receivers:
// subscribe without a live receiver (verify=false) and the distinct code for a refused address.

const err = (code: number, message: string) => ({ code, message });
const NOT_ALLOWED = err(
  100515,
  "callback url is not allowed: its host resolves only to addresses the outbound policy refuses (CALLBACK_ALLOWED_CIDRS)",
);
const NO_CONNECT = err(100502, "failed to connect url");

describe("webhooks as receivers want them", () => {
  let sys: TestSystem;
  const receivers: Receiver[] = [];
  const receiver = async (port = 0) => {
    const r = await Receiver.start(port);
    receivers.push(r);
    return r;
  };
  const sub = (params: Record<string, string>, mount = M) => call(sys.gatewayUrl, `${mount}/rest/subscribe`, params);

  beforeAll(async () => {
    sys = await TestSystem.start({ notifiers: 1, env: { ...QUICK_CALLBACKS_ENV, RETRY_MAX_ATTEMPTS: "50", RETRY_MAX_MS: "200" } });
    await openTopic(sys.gatewayUrl, "hooks");
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await sys?.stop();
  });

  it("without verify, a receiver down and a refused address are both 100502, as the original answered", async () => {
    const down = await receiver();
    const url = down.url();
    await down.close();
    for (const mount of [M, E]) {
      expect((await sub({ topic: "hooks", url }, mount)).json).toEqual(NO_CONNECT);
      expect((await sub({ topic: "hooks", url: "http://10.0.0.1:8080/cb" }, mount)).json).toEqual(NO_CONNECT);
    }
  });

  it("verify=true: 100502 for a receiver down, 100515 for a refused address; a bad verify 100516", async () => {
    const down = await receiver();
    const url = down.url();
    await down.close();
    expect((await sub({ topic: "hooks", url, verify: "true" })).json).toEqual(NO_CONNECT);
    expect((await sub({ topic: "hooks", url: "http://10.0.0.1:8080/cb", verify: "true" }, E)).json).toEqual(NOT_ALLOWED);
    expect((await sub({ topic: "hooks", url: "http://169.254.169.254/x", verify: "false" })).json).toEqual(NOT_ALLOWED);
    expect((await sub({ topic: "hooks", url, verify: "maybe" })).json).toEqual(err(100516, "verify should be true or false"));
    // The check keeps its place: a bad URL format still comes first.
    expect((await sub({ topic: "hooks", url: "nope", verify: "false" })).json).toEqual(err(100501, "invalid url format"));
  });

  it("verify=false takes a receiver that is down now, and delivers once it is up", async () => {
    const down = await receiver();
    const url = down.url();
    const port = Number(new URL(url).port);
    await down.close();
    const r = await sub({ topic: "hooks", url, verify: "false" });
    expect(r.text).toMatch(/^[0-9a-f-]{36}$/);
    const id = r.text;
    const eventId = await publish(sys.gatewayUrl, "hooks", "while down");
    const up = await receiver(port);
    await up.until(() => up.deliveredIds(id).includes(eventId), "the event published while the receiver was down");
  });
});
