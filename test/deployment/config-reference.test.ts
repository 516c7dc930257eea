import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeVariables, referenceRow, SERVICE_SCHEMAS, type ServiceKind, type VariableInfo } from "./service-schemas.ts";

const DOC = "docs/configuration.md";
const text = readFileSync(join(import.meta.dirname, "..", "..", DOC), "utf8");

interface Section {
  heading: string;
  /** Variable name → the default column as written, backticks removed. */
  rows: Map<string, string>;
}

/** `## Heading` sections with their table rows of the form `| \`NAME\` | default | …`. */
function sections(md: string): Section[] {
  const out: Section[] = [];
  let current: Section | undefined;
  for (const line of md.split("\n")) {
    const h = /^##\s+(.*)$/.exec(line);
    if (h) {
      current = { heading: (h[1] as string).toLowerCase(), rows: new Map() };
      out.push(current);
      continue;
    }
    const row = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|([^|]*)\|/.exec(line);
    if (row && current) current.rows.set(row[1] as string, (row[2] as string).trim().replace(/^`(.*)`$/, "$1"));
  }
  return out;
}

/** A section documents a service's variables when its heading names the service or all services. */
const appliesTo = (s: Section, kind: ServiceKind) => s.heading.includes(kind) || s.heading.includes("all services");

const expectedDefault = (v: VariableInfo) =>
  v.default === undefined ? (v.required ? "(required)" : "(unset)") : v.default === "" ? '""' : v.default;

describe(DOC, () => {
  const docSections = sections(text);

  it("has a section for each service", () => {
    for (const kind of Object.keys(SERVICE_SCHEMAS) as ServiceKind[]) {
      expect(docSections.some((s) => s.heading === kind)).toBe(true);
    }
  });

  it("documents every variable of every service schema, with its default", () => {
    // Read from the live schemas, so a variable added anywhere fails here until it has a row.
    const missing: string[] = [];
    const wrong: string[] = [];
    for (const [kind, schema] of Object.entries(SERVICE_SCHEMAS) as Array<[ServiceKind, (typeof SERVICE_SCHEMAS)[ServiceKind]]>) {
      const mine = docSections.filter((s) => appliesTo(s, kind));
      for (const v of describeVariables(schema)) {
        const documented = mine.map((s) => s.rows.get(v.name)).filter((d) => d !== undefined);
        if (documented.length === 0)
          missing.push(
            `${kind}: ${v.name} — add under "## ${kind[0]?.toUpperCase()}${kind.slice(1)}" (or a shared section):\n${referenceRow(v)}`,
          );
        for (const d of documented) {
          if (d !== expectedDefault(v))
            wrong.push(`${kind}: ${v.name} is documented with default ${d}, the schema's is ${expectedDefault(v)}`);
        }
      }
    }
    expect(missing, `variables missing from ${DOC}`).toEqual([]);
    expect(wrong, `defaults in ${DOC} that differ from the schemas`).toEqual([]);
  });

  it("gives every variable a fix for bad values", () => {
    // parseEnv shows the .describe() text as the fix; without it a bad value gets no advice.
    const undescribed = Object.entries(SERVICE_SCHEMAS).flatMap(([kind, schema]) =>
      describeVariables(schema)
        .filter((v) => !v.fix)
        .map((v) => `${kind}: ${v.name}`),
    );
    expect(undescribed).toEqual([]);
  });

  it("documents the npm start options and npm run kafka", () => {
    const start = readFileSync(join(import.meta.dirname, "..", "..", "scripts", "start.ts"), "utf8");
    const flags = [...start.matchAll(/^\s+"?([a-z][a-z-]*)"?: \{ type: "(?:string|boolean)"/gm)].map((m) => `--${m[1]}`);
    expect(flags.length).toBeGreaterThan(0);
    const vars = [...new Set([...start.matchAll(/process\.env\.(START_[A-Z_]+|STACK_DIR|KAFKA_PORT)/g)].map((m) => m[1] as string))];
    for (const name of [...flags, ...vars, "npm run kafka"]) expect(text, name).toContain(name);
  });
});
