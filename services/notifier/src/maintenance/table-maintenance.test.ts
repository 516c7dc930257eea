import { describe, expect, it } from "vitest";
import type { Logger } from "@evb/domain";
import type { MaintenanceRound } from "@evb/storage";
import { TableMaintenance } from "./table-maintenance.ts";

/** A logger that keeps what was said at info and warn. */
function recordingLogger() {
  const lines: string[] = [];
  const logger = {
    debug() {},
    info: (_o: object, msg?: string) => void lines.push(`info ${msg}`),
    warn: (_o: object, msg?: string) => void lines.push(`warn ${msg}`),
    error: (_o: object, msg?: string) => void lines.push(`error ${msg}`),
  } as unknown as Logger;
  return { lines, logger };
}

/** Rounds answered from a script: an outcome, or an error thrown. */
function scripted(steps: (MaintenanceRound | Error)[]) {
  let calls = 0;
  const vacuum = async () => {
    const s = steps[calls++];
    if (s instanceof Error) throw s;
    return s ?? "done";
  };
  return { vacuum, calls: () => calls };
}

describe("TableMaintenance", () => {
  it("logs a run of failures once when it starts and once when a round succeeds again", async () => {
    const { lines, logger } = recordingLogger();
    const boom = new Error("canceling statement due to statement timeout");
    const s = scripted(["done", boom, boom, boom, "busy", "done", boom, "done"]);
    const m = new TableMaintenance({ vacuum: s.vacuum, intervalMs: 0, logger });
    for (let i = 0; i < 8; i++) await m.round();
    expect(s.calls()).toBe(8);
    expect(lines).toEqual([
      expect.stringMatching(/^warn table maintenance failed/),
      "info table maintenance works again",
      expect.stringMatching(/^warn table maintenance failed/),
      "info table maintenance works again",
    ]);
    m.close();
  });

  it("never runs two rounds at once: a round asked for while one runs joins it", async () => {
    let release: () => void = () => {};
    let calls = 0;
    const vacuum = () => {
      calls++;
      return new Promise<MaintenanceRound>((resolve) => {
        release = () => resolve("done");
      });
    };
    const m = new TableMaintenance({ vacuum, intervalMs: 0, logger: recordingLogger().logger });
    const first = m.round();
    const second = m.round();
    expect(second).toBe(first);
    release();
    await first;
    expect(calls).toBe(1);
    const third = m.round();
    release();
    await third;
    expect(calls).toBe(2);
    m.close();
  });

  it("runs a round at every tick of its interval until closed, and none with an interval of 0", async () => {
    const ticks: { tick: () => void; ms: number; stopped: boolean }[] = [];
    const fakeEvery = (tick: () => void, ms: number) => {
      const t = { tick, ms, stopped: false };
      ticks.push(t);
      return () => {
        t.stopped = true;
      };
    };
    const s = scripted([]);
    const off = new TableMaintenance({ vacuum: s.vacuum, intervalMs: 0, logger: recordingLogger().logger, every: fakeEvery });
    off.close();
    expect(ticks).toEqual([]);
    const m = new TableMaintenance({ vacuum: s.vacuum, intervalMs: 60_000, logger: recordingLogger().logger, every: fakeEvery });
    expect(ticks.map((t) => t.ms)).toEqual([60_000]);
    ticks[0]?.tick();
    await m.round(); // joins the round the tick started
    expect(s.calls()).toBe(1);
    m.close();
    expect(ticks[0]?.stopped).toBe(true);
  });
});
