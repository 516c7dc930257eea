import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { Heartbeat } from "./heartbeat.ts";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("Heartbeat", () => {
  it("beats every interval, and at once after beatSoon, then every interval from there", async () => {
    const beat = vi.fn(async () => {});
    const h = new Heartbeat({ beat, intervalMs: 2_000, name: "n", logger: silentLogger });
    await h.start();
    expect(beat).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(500);
    h.beatSoon();
    h.beatSoon(); // one beat for several calls before it runs
    await vi.advanceTimersByTimeAsync(0);
    expect(beat).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(beat).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(beat).toHaveBeenCalledTimes(3);
    await h.close();
    h.beatSoon();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(beat).toHaveBeenCalledTimes(3);
  });

  it("retries a failed beat within 250 ms, and goes back to the interval once one lands", async () => {
    let down = true;
    const beat = vi.fn(async () => {
      if (down) throw new Error("Command timed out");
    });
    const h = new Heartbeat({ beat, intervalMs: 2_000, name: "n", logger: silentLogger });
    await h.start();
    await vi.advanceTimersByTimeAsync(250);
    expect(beat).toHaveBeenCalledTimes(2);
    down = false;
    await vi.advanceTimersByTimeAsync(250);
    expect(beat).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(beat).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(beat).toHaveBeenCalledTimes(4);
    await h.close();
  });
});
