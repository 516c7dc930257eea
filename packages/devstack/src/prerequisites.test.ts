import { afterEach, describe, expect, it } from "vitest";
import { MissingPrerequisiteError, requireJavaAndMaven, requireRedisServer } from "./prerequisites.ts";

describe("missing prerequisites", () => {
  const path = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path;
  });

  it("names Java and how to install it when java is not on PATH", () => {
    process.env.PATH = "/nonexistent";
    expect(() => requireJavaAndMaven()).toThrow(MissingPrerequisiteError);
    expect(() => requireJavaAndMaven()).toThrow(/Java.*apt-get install -y openjdk-17-jre-headless/);
  });

  it("names redis-server and how to install it", () => {
    process.env.PATH = "/nonexistent";
    expect(() => requireRedisServer()).toThrow(/redis-server.*apt-get install -y redis-server/);
  });

  it("passes on this machine, where the tools are installed", () => {
    expect(() => requireJavaAndMaven()).not.toThrow();
  });
});
