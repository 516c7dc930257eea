import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Supervised, type SupervisedChild } from "./supervised.ts";

/** A process the test ends by hand; `stop()` ends it as a signal would. */
function fakeChild() {
  let exit: (code: number | null) => void = () => {};
  const child: SupervisedChild & { die(code: number | null): void; stopped: boolean } = {
    exitSignal: null,
    stopped: false,
    exited: new Promise((r) => {
      exit = r;
    }),
    die(code) {
      exit(code);
    },
    async stop() {
      child.stopped = true;
      exit(null);
    },
  };
  return child;
}

// The core that services and infrastructure (Kafka brokers, private Postgres/Redis) share; the
// backoff itself is covered in supervised-service.test.ts. Faults survived here: a Ctrl-C in
// the middle of a start, and a death that a failure test wants left alone.
describe("Supervised", () => {
  let lines: string[];
  let children: ReturnType<typeof fakeChild>[];
  /** Resolves the launch in progress as healthy. */
  let healthy: () => void;

  const supervised = (restart?: boolean) =>
    new Supervised({
      name: "kafka-1",
      progress: (m) => lines.push(m),
      ...(restart === undefined ? {} : { restart }),
      launch: async (onSpawn) => {
        const c = fakeChild();
        children.push(c);
        onSpawn(c);
        // Like a real launch: healthy, or rejected as soon as the process is gone.
        await Promise.race([
          new Promise<void>((r) => {
            healthy = r;
          }),
          c.exited.then((code) => {
            throw new Error(`kafka-1 exited with code ${code} during start`);
          }),
        ]);
        return c;
      },
    });

  beforeEach(() => {
    vi.useFakeTimers();
    lines = [];
    children = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a stop in the middle of the first start ends the process being started, and the start rejects", async () => {
    const s = supervised();
    const started = s.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(children).toHaveLength(1);
    await s.stop();
    await expect(started).rejects.toThrow(/during start/);
    expect(children[0]?.stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(children).toHaveLength(1);
    expect(lines).toEqual([]);
  });

  it("a start after a stop launches nothing", async () => {
    const s = supervised();
    await s.stop();
    await expect(s.start()).rejects.toThrow("kafka-1 was stopped before it could start");
    expect(children).toHaveLength(0);
  });

  it("a stop in the middle of a restart ends the process being restarted, and nothing restarts after", async () => {
    const s = supervised();
    const started = s.start();
    healthy();
    await started;
    children[0]?.die(null);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(children).toHaveLength(2);
    await s.stop();
    expect(children[1]?.stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(children).toHaveLength(2);
    expect(lines).toEqual(["kafka-1 was killed by a signal; restarting in 1 s"]);
  });

  it("with restart: false, a death is left alone (failure tests kill brokers on purpose)", async () => {
    const s = supervised(false);
    const started = s.start();
    healthy();
    await started;
    children[0]?.die(137);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(children).toHaveLength(1);
    expect(lines).toEqual([]);
    // ...and can be started again by hand.
    const again = s.start();
    healthy();
    await again;
    expect(s.child).toBe(children[1]);
    await s.stop();
  });
});
