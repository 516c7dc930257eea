import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatLocalTimestamp } from "@evb/domain";

export interface BuildInfo {
  eventVersion: string;
  gitCommitTimeStamp: string;
  gitBranch: string;
  gitCommitHash: string;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

function git(args: string[]): string {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

/**
 * Version and git facts for admin/getVersion. A built image carries `build-info.json` (written
 * by `scripts/build-info.ts` when the image is built, where git is at hand); a checkout asks
 * git once at start. Any fact that cannot be had is "" (behaviour.md 9.2).
 */
export function loadBuildInfo(root = ROOT): BuildInfo {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: string };
  const file = join(root, "build-info.json");
  if (existsSync(file)) {
    const b = JSON.parse(readFileSync(file, "utf8")) as Partial<BuildInfo>;
    return {
      eventVersion: pkg.version ?? "",
      gitCommitTimeStamp: b.gitCommitTimeStamp ?? "",
      gitBranch: b.gitBranch ?? "",
      gitCommitHash: b.gitCommitHash ?? "",
    };
  }
  const epoch = Number.parseInt(git(["log", "-1", "--format=%ct"]), 10);
  return {
    eventVersion: pkg.version ?? "",
    gitCommitTimeStamp: Number.isFinite(epoch) ? formatLocalTimestamp(epoch * 1000) : "",
    gitBranch: git(["rev-parse", "--abbrev-ref", "HEAD"]),
    gitCommitHash: git(["rev-parse", "--short", "HEAD"]),
  };
}
