import { type parseEnv, sharedEnv } from "@evb/config";
import { GatewayEnv } from "../../services/gateway/src/config.ts";
import { IndexerEnv } from "../../services/indexer/src/config.ts";
import { NotifierEnv } from "../../services/notifier/src/config.ts";

export type EnvSchema = Parameters<typeof parseEnv>[1];
export type ServiceKind = "gateway" | "indexer" | "notifier";

/**
 * The live schemas, read when a test runs: variables other engineers add are checked (and
 * must be documented and set correctly) without touching these tests.
 */
export const SERVICE_SCHEMAS: Record<ServiceKind, EnvSchema> = {
  gateway: GatewayEnv,
  indexer: IndexerEnv,
  notifier: NotifierEnv,
};

export const SHARED_VARIABLES: ReadonlySet<string> = new Set(Object.keys(sharedEnv));

export interface VariableInfo {
  name: string;
  /** No default and not optional: the service refuses to start without it. */
  required: boolean;
  /** The default as it would be written in the environment, e.g. "8080"; undefined when none. */
  default?: string;
  /** The `.describe()` text, shown as the fix when the value is bad. */
  fix?: string;
  /** Accepted values as far as the schema says (range, list, pattern). */
  accepted: string;
}

interface JsonProp {
  default?: unknown;
  description?: string;
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

/** Variables of a schema, from its input-side JSON Schema (defaults as strings, before transforms). */
export function describeVariables(schema: EnvSchema): VariableInfo[] {
  const json = schema.toJSONSchema({ io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, JsonProp>;
    required?: string[];
  };
  const required = new Set(json.required ?? []);
  return Object.keys(schema.shape).map((name) => {
    const p = json.properties?.[name] ?? {};
    const field = schema.shape[name] as { description?: string };
    return {
      name,
      required: required.has(name),
      default: p.default === undefined ? undefined : String(p.default),
      fix: field.description ?? p.description,
      accepted: accepted(p),
    };
  });
}

function accepted(p: JsonProp): string {
  if (p.enum) return p.enum.map((v) => `\`${String(v)}\``).join(", ");
  if (p.type === "integer" && p.minimum !== undefined && p.maximum !== undefined) return `integer ${p.minimum}–${p.maximum}`;
  if (p.pattern) return `matches \`${p.pattern}\``;
  return p.type ?? "text";
}

/** A docs/configuration.md table row for a variable, offered in failure messages. */
export function referenceRow(v: VariableInfo): string {
  const def = v.default === undefined ? (v.required ? "(required)" : "(unset)") : v.default === "" ? '`""`' : `\`${v.default}\``;
  return `| \`${v.name}\` | ${def} | ${v.fix ?? "TODO: what it means, with unit"} | ${v.accepted} |`;
}
