/**
 * Variables that were renamed, new name → old name. The old name is still read where it
 * reaches the process environment, with a warning, and the new name wins when both are set.
 *
 * GROUPS became GROUP_IDS because GROUPS is a bash special variable: `GROUPS=1,2 npm start`
 * never reaches the process, so the shell silently kept group 1 only.
 */
const RENAMED: Readonly<Record<string, string>> = {
  GROUP_IDS: "GROUPS",
};

const warned = new Set<string>();

/** Writes a warning once per process and message. */
export type Warn = (message: string) => void;

export const warnOnce: Warn = (message) => {
  if (warned.has(message)) return;
  warned.add(message);
  process.stderr.write(`${message}\n`);
};

/**
 * The value of `name` in `env`, falling back to its old name. Empty counts as unset. The
 * returned `from` is the variable the value came from, for error messages.
 */
export function readRenamed(
  service: string,
  name: string,
  env: NodeJS.ProcessEnv,
  warn: Warn,
): { value: string | undefined; from: string } {
  const value = env[name] === "" ? undefined : env[name];
  const oldName = RENAMED[name];
  if (oldName === undefined) return { value, from: name };
  const old = env[oldName] === "" ? undefined : env[oldName];
  if (old === undefined) return { value, from: name };
  if (value === undefined) {
    warn(`${service}: ${oldName} is deprecated; set ${name} instead (${oldName} is read for now)`);
    return { value: old, from: oldName };
  }
  if (old !== value) warn(`${service}: ${oldName}="${old}" is ignored because ${name}="${value}" is set; remove ${oldName}`);
  return { value, from: name };
}
