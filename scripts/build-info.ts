/**
 * `npm run build-info`: writes `build-info.json` at the repository root with the git facts
 * admin/getVersion reports (gitCommitTimeStamp `YYYY-MM-DD HH:mm:ss`, gitBranch, gitCommitHash).
 *
 * A container image has no git and no `.git`, so the facts must be fixed when the image is
 * built. Sources, strongest first:
 *   1. GIT_COMMIT_HASH / GIT_BRANCH / GIT_COMMIT_TIMESTAMP (the Dockerfile's build args);
 *      GIT_COMMIT_TIMESTAMP is either `YYYY-MM-DD HH:mm:ss` or seconds since the epoch;
 *   2. with `--keep`, an existing build-info.json (made by `npm run build-info` on the host
 *      before `docker build`, and sent in the build context);
 *   3. git itself.
 * Whatever none of them knows is written as "" (behaviour.md 9.2: an unknown fact is empty),
 * so the running gateway never shells out to a git that is not there.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { formatLocalTimestamp } from "@evb/domain";

interface GitFacts {
  gitCommitTimeStamp: string;
  gitBranch: string;
  gitCommitHash: string;
}

const ROOT = join(import.meta.dirname, "..");

const { values: args } = parseArgs({
  options: {
    keep: { type: "boolean", default: false },
    out: { type: "string", default: join(ROOT, "build-info.json") },
  },
});
const FILE = resolve(args.out);

function git(gitArgs: string[]): string {
  try {
    return execFileSync("git", gitArgs, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

/** Accepts the display form as is and turns epoch seconds (what `git log --format=%ct` prints) into it. */
function timestamp(v: string): string {
  if (/^\d+$/.test(v)) return formatLocalTimestamp(Number(v) * 1000);
  return /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(v) ? v : "";
}

function fromEnv(): Partial<GitFacts> {
  const e = process.env;
  const facts: Partial<GitFacts> = {};
  if (e.GIT_COMMIT_HASH) facts.gitCommitHash = e.GIT_COMMIT_HASH.slice(0, 7);
  if (e.GIT_BRANCH) facts.gitBranch = e.GIT_BRANCH;
  if (e.GIT_COMMIT_TIMESTAMP) facts.gitCommitTimeStamp = timestamp(e.GIT_COMMIT_TIMESTAMP);
  return facts;
}

function fromFile(): Partial<GitFacts> {
  if (!args.keep || !existsSync(FILE)) return {};
  try {
    return JSON.parse(readFileSync(FILE, "utf8")) as Partial<GitFacts>;
  } catch {
    return {};
  }
}

function fromGit(): GitFacts {
  return {
    gitCommitTimeStamp: timestamp(git(["log", "-1", "--format=%ct"])),
    gitBranch: git(["rev-parse", "--abbrev-ref", "HEAD"]),
    gitCommitHash: git(["rev-parse", "--short=7", "HEAD"]),
  };
}

const file = fromFile();
const env = fromEnv();
// Git is asked only for what the stronger sources leave open, so an image build without .git stays quiet.
const known = { ...file, ...env };
const needGit = !known.gitCommitTimeStamp || !known.gitBranch || !known.gitCommitHash;
const facts: GitFacts = {
  gitCommitTimeStamp: "",
  gitBranch: "",
  gitCommitHash: "",
  ...(needGit ? fromGit() : {}),
  ...Object.fromEntries(Object.entries(known).filter(([, v]) => typeof v === "string" && v !== "")),
};
writeFileSync(FILE, `${JSON.stringify(facts, null, 2)}\n`);
process.stdout.write(`${FILE}: ${JSON.stringify(facts)}\n`);
