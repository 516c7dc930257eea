import { parse } from "yaml";

/** The parts of a compose service the deployment checks read. */
export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  hostname?: string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: Array<string | number | { target: number; published?: string | number }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: string[];
}

export interface ComposeDoc {
  services: Record<string, ComposeService>;
  networks?: Record<string, { ipam?: { config?: Array<{ subnet?: string }> } } | null>;
}

/** What `docker compose` says, refusing to start, when a `${VAR:?message}` variable is unset or empty. */
export class MissingVariableError extends Error {
  readonly variable: string;
  constructor(variable: string, hint: string) {
    super(`required variable ${variable} is missing a value: ${hint}`);
    this.variable = variable;
  }
}

/**
 * Parses a compose file the way `docker compose config` reads it for these checks: YAML merge
 * keys (`<<: *anchor`) resolved, then `${VAR:-default}` interpolated from `hostEnv` (what the
 * shell and `.env` hold; the checks pass only the required secrets, so what is verified is the
 * file's own defaults). A required `${VAR:?message}` that `hostEnv` lacks throws
 * MissingVariableError, as compose refuses to start.
 */
export function parseCompose(text: string, hostEnv: Record<string, string> = {}): ComposeDoc {
  const doc = parse(text, { merge: true }) as ComposeDoc;
  return interpolateAll(doc, hostEnv) as ComposeDoc;
}

function interpolateAll(v: unknown, env: Record<string, string>): unknown {
  if (typeof v === "string") return interpolate(v, env);
  if (Array.isArray(v)) return v.map((x) => interpolateAll(x, env));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolateAll(x, env)]));
  return v;
}

/**
 * Compose interpolation: `$$`, `$VAR`, `${VAR}`, `${VAR:-def}`, `${VAR-def}`, and the required
 * `${VAR:?message}` (unset or empty throws) and `${VAR?message}` (unset throws); unset and no
 * default is "".
 */
export function interpolate(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name, op, arg, bare) => {
    if (m === "$$") return "$";
    if (bare) return env[bare] ?? "";
    const v = env[name];
    const missing = op?.startsWith(":") ? v === undefined || v === "" : v === undefined;
    if (op?.endsWith("?") && missing) throw new MissingVariableError(name, arg);
    if (op?.endsWith("-") && missing) return arg;
    return v ?? "";
  });
}

/** The `${VAR:?message}` and `${VAR?message}` variables of a compose file, with their messages. */
export function requiredVariables(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):?\?([^}]*)\}/g)) out.set(m[1] as string, m[2] as string);
  return out;
}

/** A service's environment as strings; a bare `NAME` or `NAME: null` (taken from the host) counts as unset. */
export function composeEnv(svc: ComposeService): Record<string, string> {
  const out: Record<string, string> = {};
  const env = svc.environment ?? {};
  if (Array.isArray(env)) {
    for (const entry of env) {
      const i = entry.indexOf("=");
      if (i > 0) out[entry.slice(0, i)] = entry.slice(i + 1);
    }
    return out;
  }
  for (const [k, v] of Object.entries(env)) if (v !== null && v !== undefined) out[k] = String(v);
  return out;
}

export interface PortMapping {
  host?: number;
  container: number;
}

/** Short (`[ip:]host:container[/proto]`, `container`) and long (`{target, published}`) port syntax. */
export function portMappings(svc: ComposeService): PortMapping[] {
  return (svc.ports ?? []).map((p) => {
    if (typeof p === "object") return { container: p.target, host: p.published === undefined ? undefined : Number(p.published) };
    const parts = String(p)
      .replace(/\/(tcp|udp)$/, "")
      .split(":");
    const container = Number(parts.at(-1));
    const host = parts.length >= 2 ? Number(parts.at(-2)) : undefined;
    return { container, host };
  });
}

/** The URLs a healthcheck command requests (in an exec array or a shell string). */
export function healthcheckUrls(svc: ComposeService): URL[] {
  const hc = svc.healthcheck;
  if (!hc || hc.disable || !hc.test) return [];
  const text = Array.isArray(hc.test) ? hc.test.join(" ") : hc.test;
  return [...text.matchAll(/https?:\/\/[^\s"']+/g)].map((m) => new URL(m[0]));
}

export function hasHealthcheck(svc: ComposeService): boolean {
  const t = svc.healthcheck?.test;
  if (svc.healthcheck?.disable || !t) return false;
  return !(Array.isArray(t) && t[0] === "NONE");
}

/** Names this service waits for, with the condition (`service_started` when none is given). */
export function dependencies(svc: ComposeService): Map<string, string> {
  const d = svc.depends_on ?? [];
  if (Array.isArray(d)) return new Map(d.map((n) => [n, "service_started"]));
  return new Map(Object.entries(d).map(([n, v]) => [n, v?.condition ?? "service_started"]));
}

export function commandArgs(svc: ComposeService): string[] | undefined {
  if (svc.command === undefined) return undefined;
  return Array.isArray(svc.command) ? svc.command : svc.command.split(/\s+/).filter(Boolean);
}

/** `INTERNAL://kafka-1:9092,CONTROLLER://:9093` → listener name → host and port. */
export function kafkaListeners(value: string | undefined): Map<string, { host: string; port: number }> {
  const out = new Map<string, { host: string; port: number }>();
  for (const item of (value ?? "").split(",").map((s) => s.trim())) {
    const m = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(item);
    if (m) out.set(m[1] as string, { host: m[2] as string, port: Number(m[3]) });
  }
  return out;
}

/** `1@kafka-1:9093,…` → voters. */
export function kafkaVoters(value: string | undefined): Array<{ id: number; host: string; port: number }> {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((v) => {
      const m = /^(\d+)@([^:]+):(\d+)$/.exec(v);
      return m ? { id: Number(m[1]), host: m[2] as string, port: Number(m[3]) } : { id: Number.NaN, host: v, port: Number.NaN };
    });
}

/** What the runtime stage of a Dockerfile sets: its base, ENV, USER, HEALTHCHECK, ENTRYPOINT and CMD. */
export interface DockerImage {
  from: string;
  env: Record<string, string>;
  user?: string;
  healthcheck?: string;
  entrypoint: string[];
  cmd: string[];
  runs: string[];
}

/** Reads the last stage of a Dockerfile; enough of the syntax for this project's own file. */
export function parseDockerfile(text: string): DockerImage {
  const lines = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const args: Record<string, string> = {};
  let image: DockerImage = { from: "", env: {}, entrypoint: [], cmd: [], runs: [] };
  for (const line of lines) {
    const [, instr = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const op = instr.toUpperCase();
    if (op === "ARG" && !image.from) {
      const [k, v = ""] = rest.split("=");
      if (k) args[k] = v.replace(/^"|"$/g, "");
    } else if (op === "FROM") {
      const base = rest.split(/\s+/)[0] ?? "";
      image = { from: base.replace(/\$\{(\w+)\}/g, (_m, n: string) => args[n] ?? ""), env: {}, entrypoint: [], cmd: [], runs: [] };
    } else if (op === "ENV") {
      for (const m of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g))
        image.env[m[1] as string] = (m[2] as string).replace(/^"|"$/g, "");
    } else if (op === "USER") image.user = rest;
    else if (op === "HEALTHCHECK") image.healthcheck = rest;
    else if (op === "RUN") image.runs.push(rest);
    else if (op === "ENTRYPOINT" || op === "CMD") {
      const list = rest.startsWith("[") ? (JSON.parse(rest) as string[]) : ["/bin/sh", "-c", rest];
      if (op === "ENTRYPOINT") image.entrypoint = list;
      else image.cmd = list;
    }
  }
  return image;
}

/** Whether .dockerignore keeps `path` out of the build context (a match on the path or any parent; `!` re-includes). */
export function dockerIgnored(patterns: string[], path: string, matches: (p: string, glob: string) => boolean): boolean {
  const parts = path.split("/");
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith("!");
    const glob = (negate ? raw.slice(1) : raw).replace(/^\/+|\/+$/g, "");
    for (let i = 1; i <= parts.length; i++) {
      if (matches(parts.slice(0, i).join("/"), glob)) {
        ignored = !negate;
        break;
      }
    }
  }
  return ignored;
}
