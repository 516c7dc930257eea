import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StartLock } from "./start-lock.ts";

describe("StartLock", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-lock-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is taken once: a second taker is told the live holder's pid", () => {
    const path = join(dir, "a", "start.lock");
    const lock = new StartLock(path);
    expect(lock.take()).toBeUndefined();
    expect(readFileSync(path, "utf8")).toBe(String(process.pid));
    // Another npm start, while this (live) process holds it.
    expect(new StartLock(path).take(process.pid + 1_000_000)).toBe(process.pid);
    lock.release();
    expect(existsSync(path)).toBe(false);
    lock.release();
  });

  it("takes over a lock left by a process that is gone, or one that names no process", () => {
    for (const left of ["2147483646", "", "garbage"]) {
      const path = join(dir, "start.lock");
      writeFileSync(path, left);
      expect(new StartLock(path).take()).toBeUndefined();
      expect(readFileSync(path, "utf8")).toBe(String(process.pid));
    }
  });
});
