import { describe, expect, it } from "vitest";
import { placedCommand } from "./placement.ts";

describe("placedCommand", () => {
  it("leaves a command without a namespace unchanged and lets spawn take the ids", () => {
    expect(placedCommand("postgres", ["-D", "x"], undefined, { uid: 5, gid: 6 })).toEqual({
      command: "postgres",
      args: ["-D", "x"],
      spawnIds: { uid: 5, gid: 6 },
    });
  });

  it("runs a command in a namespace through ip netns exec", () => {
    expect(placedCommand("redis-server", ["--port", "1"], "bed-redis", {})).toEqual({
      command: "ip",
      args: ["netns", "exec", "bed-redis", "redis-server", "--port", "1"],
      spawnIds: {},
    });
  });

  it("drops to the given user inside the namespace, since ip netns exec needs root", () => {
    const placed = placedCommand("postgres", ["-D", "x"], "bed-pg", { uid: 102, gid: 103 });
    expect(placed.args).toEqual([
      "netns",
      "exec",
      "bed-pg",
      "setpriv",
      "--reuid=102",
      "--regid=103",
      "--clear-groups",
      "--",
      "postgres",
      "-D",
      "x",
    ]);
    expect(placed.spawnIds).toEqual({});
  });
});
