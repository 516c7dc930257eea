import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson200, rest, uniqueTopic } from "../support/broker-expect.ts";
import { rawCall, rawExchange } from "../support/raw-http.ts";
import { TestSystem } from "../support/system.ts";
import { describeRequest, type HostileRequest, wireBytes } from "./hostile-request.ts";
import { parseReply, type Reply, replyProblem, isRefusal } from "./reply-rules.ts";
import { hostileRequest, refusedWrite } from "./request-arbitraries.ts";
import type { Seeds } from "./value-arbitraries.ts";
import { writeCounts } from "./write-counts.ts";

/** Cases per run: small by default so `npm test` stays quick; `npm run fuzz -- --cases N` for more. */
const CASES = Number(process.env.FUZZ_CASES ?? 500);
/** A quarter as many requests again, each certain to be refused, for the nothing-written property. */
const REFUSED_CASES = Math.max(25, Math.floor(CASES / 4));
/** Hang bound per request: far above any documented wait (PUBLISH_TIMEOUT_MS is 2 s here, the connect check 0.5 s). */
const HANG_BOUND_MS = 15_000;
const GROUP_IDS = ["1", "2"];
/** FUZZ_SEED reproduces a reported run; fast-check prints the seed and shrink path of a failure. */
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

// Crash survived: none; a hostile caller sending any request at all (issue 9). No request may
// crash a service, hang, answer 5xx or an undocumented shape, or write when it is refused.
describe("fuzz: hostile requests over every operation of every variant", () => {
  let sys: TestSystem;
  let base: string;
  let seeds: Seeds;
  let sent = 0;
  /** Answers seen, by HTTP status and broker code, to show how deep the cases got. */
  const seen = new Map<string, number>();
  beforeAll(async () => {
    sys = await TestSystem.start({
      env: { GROUP_IDS: GROUP_IDS.join(","), PUBLISH_TIMEOUT_MS: "2000", CALLBACK_CONNECT_TIMEOUT_MS: "500" },
    });
    base = sys.gatewayUrl;
    const topic = uniqueTopic("fz");
    await rest(base, "L", "open", { topic });
    const pub = expectJson200(await rest(base, "L", "publish", { topic, content: "seed" }, "POST")) as { eventId: string };
    seeds = { topic, eventId: pub.eventId };
  });
  afterAll(async () => {
    const tally = [...seen].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${n}`);
    console.log(`fuzz: ${sent} hostile requests sent (FUZZ_CASES=${CASES}); answers: ${tally.join(", ")}`);
    await sys?.stop();
  });

  async function send(r: HostileRequest): Promise<Reply> {
    sent++;
    try {
      const answer = await rawExchange(base, wireBytes(r), HANG_BOUND_MS);
      const reply = parseReply(answer.text, answer.reset);
      const code = (answer.json as { code?: unknown } | undefined)?.code;
      const key = `HTTP ${reply.status}${typeof code === "number" ? ` ${code}` : ""}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      return reply;
    } catch (err) {
      throw new Error(`${String(err)}\nrequest: ${describeRequest(r)}`);
    }
  }

  function fail(r: HostileRequest, reply: Reply, problem: string): never {
    throw new Error(`${problem}\nrequest: ${describeRequest(r)}\nreply: HTTP ${reply.status} ${reply.body.slice(0, 500)}`);
  }

  it(
    "a request certain to be refused is refused and writes nothing: no row, no Kafka record",
    async () => {
      const before = await writeCounts(sys.env, GROUP_IDS);
      await fc.assert(
        fc.asyncProperty(refusedWrite(seeds), async (r) => {
          const reply = await send(r);
          const problem = replyProblem(r, reply);
          if (problem) fail(r, reply, problem);
          if (r.method !== "HEAD" && !isRefusal(reply)) fail(r, reply, "not refused");
        }),
        { numRuns: REFUSED_CASES, seed: SEED, endOnFailure: true },
      );
      expect(await writeCounts(sys.env, GROUP_IDS)).toEqual(before);
    },
    60_000 + REFUSED_CASES * 1_000,
  );

  it(
    "any request answers the documented shape for its variant, never 5xx, within the hang bound",
    async () => {
      await fc.assert(
        fc.asyncProperty(hostileRequest(seeds), async (r) => {
          const reply = await send(r);
          const problem = replyProblem(r, reply);
          if (problem) fail(r, reply, problem);
        }),
        { numRuns: CASES, seed: SEED, endOnFailure: true },
      );
    },
    60_000 + CASES * 1_000,
  );

  it("no service process died, and the gateway is healthy", async () => {
    expect(sys.exitedProcesses()).toEqual([]);
    const health = await rawCall(base, { path: "/health", timeoutMs: HANG_BOUND_MS });
    expect(health.status, health.text).toBe(200);
  });
});
