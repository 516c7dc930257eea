import { z } from "zod";
import { readRenamed, type Warn, warnOnce } from "./legacy-names.ts";
import { HIDDEN_URL, redactUrl } from "./redact-url.ts";

/** A configuration error that names every bad variable and how to fix it. */
export class ConfigError extends Error {
  constructor(service: string, problems: string[]) {
    super(`${service}: invalid configuration\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the environment with a zod object schema. Each field's `.describe()` text is the fix
 * shown when that variable is bad, so the message names the variable, its value and the fix.
 */
export function parseEnv<S extends z.ZodObject>(
  service: string,
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
  warn: Warn = warnOnce,
): z.infer<S> {
  const input: Record<string, string | undefined> = {};
  const from: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const read = readRenamed(service, key, env, warn);
    input[key] = read.value;
    from[key] = read.from;
  }
  const res = schema.safeParse(input);
  if (res.success) return res.data;
  const problems = res.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "?");
    const field = schema.shape[key] as z.ZodType | undefined;
    const fix = field?.description ? ` Fix: ${field.description}` : "";
    const value = shownValue(key, input[key]);
    const source = from[key] && from[key] !== key ? `, set as ${from[key]}` : "";
    return `${key} (${value}${source}): ${issue.message}.${fix}`;
  });
  throw new ConfigError(service, problems);
}

/** Variables whose whole value is secret (passwords, signing secrets, credentials). */
const SECRET_NAME = /SECRET|PASSWORD|AUTH|TOKEN/;

/**
 * A bad value as a start-up error shows it: secret variables not at all, anything that looks like
 * a URL or has user info (`://`, `@`) through redactUrl (no password; hidden entirely when it does
 * not parse). Start-up errors go to the terminal and to container logs, where no secret belongs.
 */
function shownValue(key: string, value: string | undefined): string {
  if (value === undefined) return "unset";
  if (SECRET_NAME.test(key)) return "value hidden";
  if (!value.includes("://") && !value.includes("@")) return `"${value}"`;
  const shown = redactUrl(value);
  return shown === HIDDEN_URL ? "value hidden: not a URL that parses" : `"${shown}"`;
}

/** Integer env var with bounds; `describe` says the unit and range. */
export function intVar(def: number, min: number, max: number, fix: string) {
  return z.coerce.number().int().min(min).max(max).default(def).describe(fix);
}

export function boolVar(def: boolean, fix: string) {
  return z
    .enum(["true", "false", "1", "0", "yes", "no"])
    .default(def ? "true" : "false")
    .transform((v) => v === "true" || v === "1" || v === "yes")
    .describe(fix);
}

/** A URL with one of the given protocols. */
export function urlVar(protocols: string[], def: string | undefined, fix: string) {
  const base = z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a ${protocols.join(" or ")} URL` },
  );
  return (def === undefined ? base : base.default(def)).describe(fix);
}

/**
 * A string variable turned into a value by `parse`; what `parse` throws becomes the variable's
 * error message (so it should say what form is expected).
 */
export function parsedVar<T>(parse: (value: string) => T, def: string, fix: string) {
  return z
    .string()
    .default(def)
    .transform((v, ctx): T => {
      try {
        return parse(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    })
    .describe(fix);
}

/** A comma-separated list of host:port. */
export function hostPortListVar(def: string, fix: string) {
  return z
    .string()
    .default(def)
    .transform((v) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((l) => l.length > 0 && l.every((hp) => /^[^\s:]+:\d{1,5}$/.test(hp)), {
      message: "must be host:port[,host:port…]",
    })
    .describe(fix);
}

/** Group ids: a comma-separated list of non-empty ids, "1" always present. */
export function groupsVar(def: string) {
  return z
    .string()
    .default(def)
    .transform((v) => [
      ...new Set(
        v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ])
    .refine((l) => l.includes("1"), { message: 'must include group "1"' })
    .refine((l) => l.every((g) => /^[A-Za-z0-9_-]{1,32}$/.test(g)), { message: "ids are 1–32 letters, digits, _ or -" })
    .describe('comma-separated group ids, e.g. "1,2"; group 1 must be listed');
}
