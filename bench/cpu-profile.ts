/**
 * Sums a V8 CPU profile (`node --cpu-prof` output, `.cpuprofile` JSON) into where the time went:
 * self time per function and per file or package, and total (inclusive) time per function.
 * `node bench/cpu-profile.ts <file-or-dir>… [--top N] [--window S]` prints one table per profile
 * (with `--window`, only its busiest S seconds: the load rather than start-up); the bench
 * writes such profiles with BENCH_CPU_PROF=<dir> (see docs/performance.md).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  ms: number;
  /** Share of all sampled time, 0–100 (idle included). */
  pct: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** `(idle)` samples: the thread waited for I/O. */
  idleMs: number;
  selfByFunction: Row[];
  selfByFile: Row[];
  /** Time with the function anywhere on the stack (each sample counted once per function). */
  totalByFunction: Row[];
}

/** `node_modules/<pkg>` (scoped too) for dependencies, the path below the repository for ours, `node:` internals as they are. */
export function fileLabel(url: string): string {
  if (url === "") return "(native/V8)";
  const path = url.replace(/^file:\/\//, "");
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = path.slice(nm + "node_modules/".length).split("/");
    return `node_modules/${rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const ours = /\/((?:services|packages|bench|scripts)\/.*)$/.exec(path);
  return ours ? (ours[1] as string) : path;
}

function functionLabel(f: CallFrame): string {
  const name = f.functionName || "(anonymous)";
  if (f.url === "") return name;
  const file = f.url.replace(/^file:\/\//, "");
  const nm = file.lastIndexOf("node_modules/");
  const short = nm >= 0 ? file.slice(nm + "node_modules/".length) : fileLabel(f.url);
  return `${name} ${short}:${f.lineNumber + 1}`;
}

function rows(map: Map<string, number>, totalUs: number, top: number): Row[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, pct: totalUs > 0 ? (100 * us) / totalUs : 0 }));
}

/** Sample times in µs from the profile's start: sample i runs from `at[i]` for `timeDeltas[i + 1]`. */
function sampleTimes(profile: CpuProfile): number[] {
  const at: number[] = [];
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    at.push(t);
  }
  return at;
}

/**
 * The `seconds`-long stretch of the profile with the most busy (not idle) time, in µs from its
 * start: under a benchmark that is the load, not the start-up or the idle baselines.
 */
export function busiestWindow(profile: CpuProfile, seconds: number): { fromUs: number; toUs: number } {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const at = sampleTimes(profile);
  const span = seconds * 1e6;
  let best = { fromUs: 0, toUs: span };
  let bestBusy = -1;
  let busy = 0;
  let lo = 0;
  for (let hi = 0; hi < at.length; hi++) {
    if (!idle.has(profile.samples[hi] as number)) busy += profile.timeDeltas[hi + 1] ?? 0;
    while ((at[hi] as number) - (at[lo] as number) >= span) {
      if (!idle.has(profile.samples[lo] as number)) busy -= profile.timeDeltas[lo + 1] ?? 0;
      lo++;
    }
    if (busy > bestBusy) {
      bestBusy = busy;
      best = { fromUs: at[lo] as number, toUs: (at[lo] as number) + span };
    }
  }
  return best;
}

/** Where a profile's sampled time went, within `window` (µs from its start) when given; `top` rows per table. */
export function summarise(profile: CpuProfile, top = 30, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Time per node: each sample's time is the delta that follows it (V8's deltas lead by one).
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  const at = sampleTimes(profile);
  for (let i = 0; i < profile.samples.length; i++) {
    if (window && ((at[i] as number) < window.fromUs || (at[i] as number) >= window.toUs)) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    totalUs += dt;
  }
  const selfFn = new Map<string, number>();
  const selfFile = new Map<string, number>();
  const totalFn = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const f = node.callFrame;
    if (f.functionName === "(idle)") idleUs += us;
    const fn = functionLabel(f);
    selfFn.set(fn, (selfFn.get(fn) ?? 0) + us);
    const file = fileLabel(f.url);
    selfFile.set(file, (selfFile.get(file) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame) break;
      const label = functionLabel(frame);
      if (seen.has(label)) continue;
      seen.add(label);
      totalFn.set(label, (totalFn.get(label) ?? 0) + us);
    }
  }
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    selfByFunction: rows(selfFn, totalUs, top),
    selfByFile: rows(selfFile, totalUs, top),
    totalByFunction: rows(totalFn, totalUs, top),
  };
}

function table(title: string, list: Row[]): string {
  const lines = list.map((r) => `| ${r.pct.toFixed(1)} % | ${r.ms.toFixed(0)} | ${r.name.replaceAll("|", "\\|")} |`);
  return [`${title}`, "", "| % | ms | where |", "|---|---|---|", ...lines, ""].join("\n");
}

/** A profile's summary as Markdown. */
export function renderSummary(name: string, s: ProfileSummary): string {
  const busy = s.totalMs - s.idleMs;
  return [
    `## ${name}`,
    "",
    `sampled ${(s.totalMs / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s (${s.totalMs > 0 ? ((100 * busy) / s.totalMs).toFixed(0) : 0} %), idle ${(s.idleMs / 1000).toFixed(1)} s`,
    "",
    table("Self time by function:", s.selfByFunction),
    table("Self time by file or package:", s.selfByFile),
    table("Total (inclusive) time by function:", s.totalByFunction),
  ].join("\n");
}

/**
 * BENCH_CPU_PROF=<dir>: the Node options that make a service write a V8 CPU profile of its whole
 * life when it stops (`--cpu-prof`), into `<dir>/<folder>/`; none when it is unset. The bench's
 * own processes (generators, baselines) are not profiled.
 */
export function cpuProfileArgs(folder: string, vars: NodeJS.ProcessEnv = process.env): string[] {
  const dir = vars.BENCH_CPU_PROF;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${resolve(dir, folder)}`] : [];
}

function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort()
    .map((f) => join(path, f));
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: "string", default: "30" }, window: { type: "string" } },
  });
  for (const file of positionals.flatMap(profileFiles)) {
    const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
    const window = values.window ? busiestWindow(profile, Number(values.window)) : undefined;
    const name = window ? `${file}, busiest ${values.window} s (from ${(window.fromUs / 1e6).toFixed(1)} s)` : file;
    process.stdout.write(`${renderSummary(name, summarise(profile, Number(values.top), window))}\n`);
  }
}
