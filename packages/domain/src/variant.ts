/** The three interface variants: L (latest), M (middle), E (earliest, later form). */
export type Variant = "L" | "M" | "E";
export const VARIANTS: readonly Variant[] = ["L", "M", "E"];

export interface Mount {
  variant: Variant;
  /** Context path, e.g. `/event-broker`; no trailing slash. */
  path: string;
}

/** Parses `L:/event-broker,M:/event-m` into mounts; throws with a fix on a bad entry. */
export function parseMounts(spec: string): Mount[] {
  const mounts = spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([LME]):(\/[A-Za-z0-9._~\-/]*)$/.exec(entry);
      if (!m) throw new Error(`"${entry}" is not variant:path; write e.g. L:/event-broker (variant one of L, M, E)`);
      const path = (m[2] as string).replace(/\/+$/, "");
      if (path === "") throw new Error(`"${entry}": the context path must not be the root`);
      return { variant: m[1] as Variant, path };
    });
  const seen = new Set<string>();
  for (const m of mounts) {
    if (seen.has(m.path)) throw new Error(`context path ${m.path} is mounted twice`);
    seen.add(m.path);
  }
  if (mounts.length === 0) throw new Error("no variant mounted; give at least one variant:path");
  return mounts;
}
