import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, parseEnv } from "./env.ts";
import { sharedEnv } from "./shared.ts";

const Schema = z.object({ GROUP_IDS: sharedEnv.GROUP_IDS });

function parse(env: Record<string, string>): { groups: string[]; warnings: string[] } {
  const warnings: string[] = [];
  const groups = parseEnv("svc", Schema, env, (m) => warnings.push(m)).GROUP_IDS;
  return { groups, warnings };
}

describe("GROUP_IDS, formerly GROUPS (a bash special variable that `GROUPS=1,2 npm start` never exports)", () => {
  it("reads GROUP_IDS", () => {
    expect(parse({ GROUP_IDS: "1,2" })).toEqual({ groups: ["1", "2"], warnings: [] });
  });

  it("defaults to group 1", () => {
    expect(parse({})).toEqual({ groups: ["1"], warnings: [] });
  });

  it("still reads the old GROUPS when it reaches the process, with a deprecation warning", () => {
    const { groups, warnings } = parse({ GROUPS: "1,3" });
    expect(groups).toEqual(["1", "3"]);
    expect(warnings).toEqual(["svc: GROUPS is deprecated; set GROUP_IDS instead (GROUPS is read for now)"]);
  });

  it("lets GROUP_IDS win when both are set, and says the old one is ignored", () => {
    const { groups, warnings } = parse({ GROUP_IDS: "1,2", GROUPS: "1,3" });
    expect(groups).toEqual(["1", "2"]);
    expect(warnings).toEqual(['svc: GROUPS="1,3" is ignored because GROUP_IDS="1,2" is set; remove GROUPS']);
  });

  it("is silent when both are set to the same value", () => {
    expect(parse({ GROUP_IDS: "1,2", GROUPS: "1,2" })).toEqual({ groups: ["1", "2"], warnings: [] });
  });

  it("names the old variable when its value is bad", () => {
    expect(() => parse({ GROUPS: "2" })).toThrow(ConfigError);
    expect(() => parse({ GROUPS: "2" })).toThrow(`GROUP_IDS ("2", set as GROUPS): must include group "1"`);
  });
});
