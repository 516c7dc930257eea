import { describe, expect, it } from "vitest";
import { BrokerError, BrokerTransportError } from "./errors.ts";
import { outcomeUnknown, retryPublish } from "./publish-retry.ts";
import type { SendResult } from "./types.ts";

const ok: SendResult = { status: "SUCCESS", topic: "t", eventId: "a-1-1" };
const timeout: SendResult = { status: "TIMEOUT", topic: "t", eventId: null };
const net = new BrokerTransportError("network", "ECONNRESET", { operation: "rest/publish" });

describe("retryPublish", () => {
  it("sends again after a TIMEOUT, a lost connection or no answer, waiting longer each time, until it knows", async () => {
    const answers: (SendResult | Error)[] = [timeout, net, new BrokerTransportError("timeout", "30000 ms", { operation: "p" }), ok];
    const waits: number[] = [];
    let calls = 0;
    const r = await retryPublish(
      async () => {
        const a = answers[calls++] as SendResult | Error;
        if (a instanceof Error) throw a;
        return a;
      },
      { baseDelayMs: 100, maxDelayMs: 250, sleep: async (ms) => void waits.push(ms) },
    );
    expect(r).toEqual(ok);
    expect(calls).toBe(4);
    expect(waits).toEqual([100, 200, 250]);
  });

  it("stops at a final answer: SUCCESS, a refusal, an HTTP error, an abort", async () => {
    for (const final of [
      new BrokerError(100101, "topic not exist", "rest/publish"),
      new BrokerError(100211, "idempotency key reused", "rest/publish"),
      new BrokerTransportError("http", "401", { operation: "rest/publish", status: 401 }),
      new BrokerTransportError("aborted", "aborted", { operation: "rest/publish" }),
    ]) {
      let calls = 0;
      await expect(
        retryPublish(
          async () => {
            calls++;
            throw final;
          },
          { sleep: async () => {} },
        ),
      ).rejects.toBe(final);
      expect(calls).toBe(1);
    }
  });

  it("gives up after `attempts` tries with the last answer", async () => {
    let calls = 0;
    const r = await retryPublish(
      async () => {
        calls++;
        return timeout;
      },
      { attempts: 3, sleep: async () => {} },
    );
    expect(r).toEqual(timeout);
    expect(calls).toBe(3);
    let thrown = 0;
    await expect(
      retryPublish(
        async () => {
          thrown++;
          throw net;
        },
        { attempts: 2, sleep: async () => {} },
      ),
    ).rejects.toBe(net);
    expect(thrown).toBe(2);
  });

  it("counts E's 200202 (not confirmed in time) as unknown, and no other broker error", () => {
    expect(outcomeUnknown({ error: new BrokerError(200202, "transaction failed", "rest/publish") })).toBe(true);
    expect(outcomeUnknown({ error: new BrokerError(100102, "topic too long", "rest/publish") })).toBe(false);
    expect(outcomeUnknown({ result: ok })).toBe(false);
  });
});
