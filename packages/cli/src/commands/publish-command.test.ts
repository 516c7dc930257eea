import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EXIT } from "../exit-codes.ts";
import { main } from "../main.ts";

/** Standard streams whose output the test reads back. */
function streams() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = (s: PassThrough) => () => (s.read() as Buffer | null)?.toString("utf8") ?? "";
  return { io: { stdout, stderr, stdin: new PassThrough() }, out: text(stdout), err: text(stderr) };
}

/** The client's global fetch replaced by one answering SUCCESS and keeping each request (no server). */
function fakeBroker(): Request[] {
  const seen: Request[] = [];
  vi.stubGlobal("fetch", async (input: string | URL | Request, init?: RequestInit) => {
    seen.push(new Request(input, init));
    return new Response(JSON.stringify({ status: "SUCCESS", topic: "t", eventId: "e-1" }), {
      headers: { "content-type": "application/json" },
    });
  });
  return seen;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("evb publish --idempotency-key", () => {
  it("sends the key as the Idempotency-Key header of the one publish", async () => {
    const seen = fakeBroker();
    const { io, out } = streams();
    expect(await main(["publish", "t", "hello", "--idempotency-key", "order-4711"], io, {})).toBe(EXIT.OK);
    expect(out()).toBe("SUCCESS e-1\n");
    expect(seen.map((r) => r.headers.get("idempotency-key"))).toEqual(["order-4711"]);
    expect(new URLSearchParams(await (seen[0] as Request).text()).has("idempotencyKey")).toBe(false);
  });

  it("without the flag sends no key", async () => {
    const seen = fakeBroker();
    expect(await main(["publish", "t", "hello"], streams().io, {})).toBe(EXIT.OK);
    expect(seen[0]?.headers.has("idempotency-key")).toBe(false);
  });

  it("is a usage error with events on standard input: one key names one event", async () => {
    const seen = fakeBroker();
    const { io, err } = streams();
    expect(await main(["publish", "t", "--idempotency-key", "k"], io, {})).toBe(EXIT.USAGE);
    expect(err()).toContain("--idempotency-key names one event");
    expect(seen).toEqual([]);
  });
});

describe("evb publish --concurrency", () => {
  /** A broker that answers each publish after the next ones arrived (or a turn), echoing its content as the eventId. */
  function slowBroker() {
    const state = { inFlight: 0, most: 0 };
    vi.stubGlobal("fetch", async (input: string | URL | Request, init?: RequestInit) => {
      const content = new URLSearchParams(await new Request(input, init).text()).get("content");
      state.inFlight++;
      state.most = Math.max(state.most, state.inFlight);
      // Later lines answer first, so an order kept is the command's doing.
      await new Promise((r) => setTimeout(r, 20 - Number(content)));
      state.inFlight--;
      return new Response(JSON.stringify({ status: "SUCCESS", topic: "t", eventId: `e-${content}` }), {
        headers: { "content-type": "application/json" },
      });
    });
    return state;
  }

  async function publishLines(n: number, flags: string[]) {
    const { io, out } = streams();
    io.stdin.end(`${Array.from({ length: n }, (_, i) => String(i)).join("\n")}\n`);
    const code = await main(["publish", "t", ...flags], io, {});
    return { code, lines: out().trim().split("\n") };
  }

  it("keeps up to N publishes in flight and reports them in the lines' order", async () => {
    const state = slowBroker();
    const r = await publishLines(10, ["--concurrency", "4"]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.lines).toEqual(Array.from({ length: 10 }, (_, i) => `SUCCESS e-${i}`));
    expect(state.most).toBe(4);
  });

  it("publishes one at a time without it", async () => {
    const state = slowBroker();
    const r = await publishLines(5, []);
    expect(r.lines).toEqual(Array.from({ length: 5 }, (_, i) => `SUCCESS e-${i}`));
    expect(state.most).toBe(1);
  });

  it("refuses 0 and more than 256", async () => {
    slowBroker();
    for (const n of ["0", "257", "x"]) expect((await publishLines(1, ["--concurrency", n])).code).toBe(EXIT.USAGE);
  });
});

describe("evb publish --batch", () => {
  /** A broker answering each rest/publishBatch with a result per event, refusing the content "bad" alone. */
  function batchBroker() {
    const bodies: { events: { topic: string; content: string }[] }[] = [];
    vi.stubGlobal("fetch", async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      expect(req.url).toMatch(/\/rest\/publishBatch$/);
      expect(req.headers.get("content-type")).toBe("application/json");
      const body = (await req.json()) as (typeof bodies)[number];
      bodies.push(body);
      const results = body.events.map((e) =>
        e.content === "bad" ? { code: 100201, message: "too long" } : { status: "SUCCESS", topic: e.topic, eventId: `e-${e.content}` },
      );
      return new Response(JSON.stringify(results), { headers: { "content-type": "application/json" } });
    });
    return bodies;
  }

  it("sends standard input's lines N to a request, in order, and prints a result per line", async () => {
    const bodies = batchBroker();
    const { io, out } = streams();
    io.stdin.end("0\n1\n\n2\nbad\n4\n");
    const code = await main(["publish", "t", "--batch", "2", "--concurrency", "2"], io, {});
    expect(bodies.map((b) => b.events.map((e) => e.content))).toEqual([["0", "1"], ["2", "bad"], ["4"]]);
    expect(out().trim().split("\n")).toEqual(["SUCCESS e-0", "SUCCESS e-1", "SUCCESS e-2", "ERROR 100201 too long", "SUCCESS e-4"]);
    expect(code).toBe(EXIT.REFUSED);
  });

  it("refuses 0, more than 1000, and a content argument", async () => {
    batchBroker();
    for (const n of ["0", "1001"]) expect(await main(["publish", "t", "--batch", n], streams().io, {})).toBe(EXIT.USAGE);
    expect(await main(["publish", "t", "hello", "--batch", "2"], streams().io, {})).toBe(EXIT.USAGE);
  });
});
