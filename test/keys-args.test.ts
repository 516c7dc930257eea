import { describe, expect, it } from "vitest";
import { parseKeysArgs, USAGE, UsageError } from "../scripts/keys/args.ts";

// `npm run keys` reads its command line before it connects to Postgres; these need no servers
// (keys-command.int.test.ts runs the commands themselves against a schema).
describe("keys: command line", () => {
  it("asks for the usage on --help, -h or help, wherever it stands", () => {
    for (const argv of [["--help"], ["-h"], ["help"], ["create", "--help"], ["revoke", "-h"], ["list", "--help"]])
      expect(parseKeysArgs(argv), argv.join(" ")).toEqual({ command: "help" });
    for (const command of ["create", "list", "revoke", "--help"]) expect(USAGE).toContain(`npm run keys -- ${command}`);
  });

  it("reads create's options, with the rate and burst optional", () => {
    expect(parseKeysArgs(["create", "--roles", "publish, read", "--groups", "1,2", "--name", " ci "])).toEqual({
      command: "create",
      roles: ["publish", "read"],
      groups: ["1", "2"],
      name: "ci",
      publishRate: null,
      publishBurst: null,
    });
    expect(
      parseKeysArgs(["create", "--roles", "admin", "--groups", "*", "--name", "x", "--publish-rate", "2.5", "--publish-burst", "10"]),
    ).toMatchObject({
      publishRate: 2.5,
      publishBurst: 10,
    });
  });

  it("reads list and revoke", () => {
    expect(parseKeysArgs(["list"])).toEqual({ command: "list" });
    expect(parseKeysArgs(["revoke", "0123456789ab"])).toEqual({ command: "revoke", id: "0123456789ab" });
  });

  it("refuses what it cannot run with a message saying why", () => {
    const refused: [string[], RegExp][] = [
      [[], /no command/],
      [["drop"], /unknown command drop/],
      [["create", "--roles", "root", "--groups", "1", "--name", "x"], /--roles/],
      [["create", "--roles", "read", "--name", "x"], /--groups/],
      [["create", "--roles", "read", "--groups", "1 2", "--name", "x"], /--groups/],
      [["create", "--roles", "read", "--groups", "1"], /--name/],
      [["create", "--roles", "read", "--groups", "1", "--name", "x", "--publish-rate", "-1"], /--publish-rate/],
      [["create", "--roles", "read", "--groups", "1", "--name", "x", "--publish-burst", "5"], /--publish-burst/],
      [["create", "--roles", "read", "--groups", "1", "--name", "x", "--colour", "red"], /colour/],
      [["revoke", "nope"], /12 hex digits/],
    ];
    for (const [argv, why] of refused) {
      expect(() => parseKeysArgs(argv), argv.join(" ")).toThrow(UsageError);
      expect(() => parseKeysArgs(argv), argv.join(" ")).toThrow(why);
    }
  });
});
