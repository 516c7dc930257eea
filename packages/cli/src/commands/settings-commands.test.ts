import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { CliContext } from "../cli-context.ts";
import { UsageError } from "../exit-codes.ts";
import { settingsFlags } from "./settings-commands.ts";

const io = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough() };
const flags = (argv: string[]) => settingsFlags(new CliContext(argv, io, {}));

describe("settings flags", () => {
  it('read numbers, "default" as the broker\'s value again, and --paused; none: no settings', () => {
    expect(flags([])).toEqual({});
    expect(flags(["--max-rate", "2.5", "--window", "default", "--retry-max-attempts", "3", "--paused"])).toEqual({
      maxRate: 2.5,
      deliveryWindow: null,
      retryMaxAttempts: 3,
      paused: true,
    });
  });

  it("refuse a value that is no number as a usage error (the broker checks the bounds)", () => {
    expect(() => flags(["--retry-base-ms", "soon"])).toThrow(UsageError);
  });

  it('--alert-url sets the alert URL (of sub add and sub settings alike), "none" removes it', () => {
    expect(flags(["--alert-url", "https://ops.example/alerts", "--window", "2"])).toEqual({
      alertUrl: "https://ops.example/alerts",
      deliveryWindow: 2,
    });
    expect(flags(["--alert-url", "none"])).toEqual({ alertUrl: null });
  });
});
