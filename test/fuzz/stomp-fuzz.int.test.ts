import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { expectJson200, rest, uniqueTopic } from "../support/broker-expect.ts";
import { frame, hdr, RawStomp, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";
import { caseProblems, healthProblem, reviveDead, vitals, WorstSeen } from "./gateway-watch.ts";
import { stompSessionProblem } from "./normal-sessions.ts";
import { deafWebSocket, floodWithoutReading } from "./slow-reader.ts";
import { describeStompCase, type StompCase, stompCase, stompFloods } from "./stomp-cases.ts";
import { judgeStomp } from "./stomp-judge.ts";
import { wsExchange } from "./stomp-wire.ts";
import type { Seeds } from "./value-arbitraries.ts";

/** The request-level suite's case count (FUZZ_CASES, default 500); this suite runs a fifth of it. */
const CASES = Math.max(5, Math.round(Number(process.env.FUZZ_CASES ?? 500) / 5));
/** Fixed so that `npm test` is repeatable; FUZZ_SEED replays a run that found something. */
const SEED = process.env.FUZZ_SEED === undefined ? 20_261_201 : Number(process.env.FUZZ_SEED);
/** Far below its default (256), so that a flood of SENDs runs past it. */
const MAX_PENDING_PUBLISHES = 8;
/** The gateway's memory may grow this much beside a client that never reads (its send buffer is 1 MiB). */
const MEMORY_LIMIT_BYTES = 128 * 1024 * 1024;

// Crash survived: none; hostile STOMP clients over WebSocket (issue 22 item 4): malformed frames,
// unknown commands, bad escapes, oversized and non-text messages, floods of frames, heart-beats
// and SENDs, and a client that never reads. Each case must get the protocol's answer (replies in
// order, ERROR then close, or the WebSocket close code), and the gateway must stay up, keep its
// loop free and its memory bounded, and serve HTTP and an ordinary STOMP session afterwards.
describe("fuzz: STOMP frames over WebSocket", () => {
  let sys: TestSystem;
  let base: string;
  let url: string;
  let seeds: Seeds;
  const died: string[] = [];
  const worst = new WorstSeen();
  let cases = 0;
  const started = Date.now();

  beforeAll(async () => {
    sys = await TestSystem.start({
      env: { PUBLISH_TIMEOUT_MS: "2000", STOMP_MAX_PENDING_PUBLISHES: String(MAX_PENDING_PUBLISHES), STOMP_POLL_MS: "500" },
    });
    base = sys.gatewayUrl;
    url = stompUrl(base);
    const topic = uniqueTopic("fzs");
    expectJson200(await rest(base, "L", "open", { topic }));
    seeds = { topic, eventId: "" };
    await vitals(base);
  });
  afterEach(async () => {
    died.push(...(await reviveDead(base, sys)));
  });
  afterAll(async () => {
    console.log(
      `STOMP fuzz: ${cases} cases (FUZZ_CASES=${process.env.FUZZ_CASES ?? 500}, seed ${SEED}) in ${Math.round((Date.now() - started) / 1000)} s; ${worst}`,
    );
    await sys?.stop();
  });

  /** What went wrong with case `c`, then whether the gateway still serves HTTP and an ordinary session. */
  async function attempt(c: StompCase): Promise<string | null> {
    cases++;
    return caseProblems({
      base,
      sys,
      worst,
      note: c.note,
      heavy: c.heavy,
      exchange: wsExchange(url, c.messages, { boundMs: c.boundMs }),
      judge: (ex) => judgeStomp(c, ex),
      session: () => stompSessionProblem(url),
    });
  }

  async function check(c: StompCase): Promise<void> {
    const problem = await attempt(c);
    if (problem) throw new Error(`${problem}\ncase (seed ${SEED}): ${describeStompCase(c)}`);
  }

  it("floods of frames, heart-beats and SENDs (past STOMP_MAX_PENDING_PUBLISHES) are answered in order, with the loop free", async () => {
    for (const c of stompFloods(seeds)) await check(c);
  }, 120_000);

  it(
    "any frames in any messages get their replies in order, and a malformed frame an ERROR and a close, never a crash",
    async () => {
      await fc.assert(
        fc.asyncProperty(stompCase(seeds), (c) => check(c)),
        { numRuns: CASES, seed: SEED, endOnFailure: true },
      );
    },
    60_000 + CASES * 2_000,
  );

  // Regression: replies to a client that read none of them piled up in the gateway without bound
  // (150 MB in 1.6 s of CONNECT frames before the fix).
  it("a client that sends frames and never reads is read no further: the gateway's memory stays bounded", async () => {
    const client = await deafWebSocket(url, false);
    // 6,000 CONNECTs a message, each answered with a CONNECTED five times its size.
    const chunk = Buffer.from("CONNECT\n\n\u0000".repeat(6_000));
    const out = await floodWithoutReading(base, client, chunk, {
      stallMs: 1_500,
      settleMs: 5_000,
      maxMs: 20_000,
      limitBytes: MEMORY_LIMIT_BYTES,
    });
    console.log(`STOMP deaf client: ${JSON.stringify(out)}`);
    expect(out.peakGrowthBytes, "the gateway's memory grew past the bound").toBeLessThanOrEqual(MEMORY_LIMIT_BYTES);
    expect(out.stalled || out.closed, "the gateway kept reading a client that reads nothing").toBe(true);
    expect(await healthProblem(base, sys)).toBeNull();
    expect(await stompSessionProblem(url)).toBeNull();
  }, 60_000);

  // Session identity (issue 28): a subscription id is its owner's; in this open-mode stack the
  // owner's address (127.0.0.1) is the identity, and 127.0.0.2 (loopback too) is another caller.
  it("any subscription id is resumed only from its owner's address: a stranger gets 100507, live or not; the owner's resume is taken", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uuid(), fc.boolean(), fc.constantFrom("OFFSET_LAST", "OFFSET_FIRST"), async (id, ownerLive, eventId) => {
        const open: RawStomp[] = [];
        const from = async (localAddress: string) => {
          const r = await RawStomp.open(url, { localAddress });
          open.push(r);
          expect((await r.connect()).command).toBe("CONNECTED");
          return r;
        };
        const subscribe = async (r: RawStomp, handle: string) => {
          const n = r.frames.length;
          r.send(frame("SUBSCRIBE", { destination: seeds.topic, id: handle, eventId, "event-subscriptionId": id }));
          return r.nth(n);
        };
        try {
          const owner = await from("127.0.0.1");
          expect(hdr(await subscribe(owner, "o"), "subscription-id")).toBe(id);
          if (!ownerLive) {
            owner.close();
            await owner.closed();
          }
          const squat = await subscribe(await from("127.0.0.2"), "s");
          expect([squat.command, hdr(squat, "code")]).toEqual(["ERROR", "100507"]);
          if (!ownerLive) {
            const back = await subscribe(await from("127.0.0.1"), "b");
            expect([back.command, hdr(back, "subscription-id")]).toEqual(["RECEIPT", id]);
          }
        } finally {
          for (const r of open) r.close();
        }
      }),
      { numRuns: Math.max(5, Math.round(CASES / 5)), seed: SEED, endOnFailure: true },
    );
    expect(await healthProblem(base, sys)).toBeNull();
  }, 120_000);

  it("no service process died during the suite", () => {
    expect(died).toEqual([]);
    expect(sys.exitedProcesses()).toEqual([]);
  });
});
