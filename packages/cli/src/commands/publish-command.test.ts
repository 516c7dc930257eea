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
