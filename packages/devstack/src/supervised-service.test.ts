import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SupervisedService } from "./supervised-service.ts";
import type { SupervisedChild } from "./supervised.ts";

/** A child process the test ends by hand. */
function fakeChild() {
  let exit: (code: number | null) => void = () => {};
  const child: SupervisedChild & { die(code: number | null, signal?: NodeJS.Signals): void; stopped: boolean } = {
    exitSignal: null,
    stopped: false,
    exited: new Promise((r) => {
      exit = r;
    }),
    die(code, signal) {
      (this as { exitSignal: NodeJS.Signals | null }).exitSignal = signal ?? null;
      exit(code);
    },
    async stop() {
      child.stopped = true;
      exit(null);
    },
  };
  return child;
}

describe("SupervisedService", () => {
  let lines: string[];
  let children: ReturnType<typeof fakeChild>[];
  let failNext: boolean;
  const service = () =>
    new SupervisedService({
      name: "indexer-1",
      service: "indexer",
      env: {},
      healthUrl: "http://127.0.0.1:1/livez",
      output: "prefixed",
      progress: (m) => lines.push(m),
      now: () => Date.now(),
      launch: async (opts) => {
        const c = fakeChild();
        children.push(c);
        opts.onSpawn(c);
        if (failNext) {
          failNext = false;
          c.die(1);
          throw new Error("indexer-1 exited with code 1 during start; its last output:\nboom");
        }
        return c;
      },
    });

  beforeEach(() => {
    vi.useFakeTimers();
    lines = [];
    children = [];
    failNext = false;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("restarts a process that dies, waiting 1 s, then 2 s while it keeps dying, and says so", async () => {
    const s = service();
    await s.start();
    children[0]?.die(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(lines).toEqual(["indexer-1 exited with code 1; restarting in 1 s"]);
    await vi.advanceTimersByTimeAsync(999);
    expect(children).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(children).toHaveLength(2);
    expect(lines[1]).toBe("indexer-1 is running again (restart 1)");
    children[1]?.die(null, "SIGKILL");
    await vi.advanceTimersByTimeAsync(0);
    expect(lines[2]).toBe("indexer-1 was killed by SIGKILL; restarting in 2 s");
    await s.stop();
  });

  it("waits 1 s again after a healthy minute", async () => {
    const s = service();
    await s.start();
    children[0]?.die(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.advanceTimersByTimeAsync(60_000);
    children[1]?.die(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(lines.at(-1)).toBe("indexer-1 exited with code 1; restarting in 1 s");
    await s.stop();
  });

  it("keeps trying, with a longer wait, when a restart fails to come up", async () => {
    const s = service();
    await s.start();
    failNext = true;
    children[0]?.die(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lines.at(-1)).toBe("indexer-1 did not come back: indexer-1 exited with code 1 during start; restarting in 2 s");
    await vi.advanceTimersByTimeAsync(2_000);
    expect(lines.at(-1)).toBe("indexer-1 is running again (restart 1)");
    await s.stop();
  });

  it("restarts nothing once stopped, also when the stop comes during the wait", async () => {
    const s = service();
    await s.start();
    children[0]?.die(1);
    await vi.advanceTimersByTimeAsync(0);
    await s.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(children).toHaveLength(1);

    const t = service();
    await t.start();
    await t.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(children).toHaveLength(2);
    expect(children[1]?.stopped).toBe(true);
    expect(lines).toEqual(["indexer-1 exited with code 1; restarting in 1 s"]);
  });
});
