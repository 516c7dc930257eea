import { parseArgs } from "node:util";
import { API_ROLES, type ApiRole } from "@evb/storage";

export const USAGE = `usage:
  npm run keys -- create --roles <publish,subscribe,read,admin> --groups <1,2|*> --name <name> [--publish-rate <per second> [--publish-burst <n>]]
  npm run keys -- list
  npm run keys -- revoke <id>
  npm run keys -- --help

Creates, lists and revokes the gateway's API keys in the ledger's Postgres (DATABASE_URL,
DATABASE_SCHEMA, as the gateway reads them). create prints the key once on stdout; only its
hash is stored. Gateways see a new or revoked key within API_KEY_CACHE_MS (docs/security.md).`;

export type KeysCommand =
  | { command: "help" }
  | { command: "list" }
  | { command: "revoke"; id: string }
  | {
      command: "create";
      roles: ApiRole[];
      groups: string[];
      name: string;
      publishRate: number | null;
      publishBurst: number | null;
    };

/** A command line we cannot run: the message says what is wrong, the usage follows it. */
export class UsageError extends Error {}

const list = (v: string | undefined) =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const CREATE_OPTIONS = {
  roles: { type: "string" },
  groups: { type: "string" },
  name: { type: "string" },
  "publish-rate": { type: "string" },
  "publish-burst": { type: "string" },
} as const;

function createOptions(argv: string[]): KeysCommand {
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof CREATE_OPTIONS }>>["values"];
  try {
    values = parseArgs({ args: argv, options: CREATE_OPTIONS }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const roles = list(values.roles);
  if (roles.length === 0 || !roles.every((r): r is ApiRole => (API_ROLES as readonly string[]).includes(r)))
    throw new UsageError(`--roles must list some of ${API_ROLES.join(", ")}`);
  const groups = list(values.groups);
  if (groups.length === 0 || !groups.every((g) => g === "*" || /^[A-Za-z0-9_-]{1,32}$/.test(g)))
    throw new UsageError("--groups must list group ids, or *");
  const name = values.name?.trim() ?? "";
  if (name === "") throw new UsageError("--name must say whose key it is");
  const rate = values["publish-rate"] === undefined ? null : Number(values["publish-rate"]);
  if (rate !== null && !(rate > 0 && rate <= 1_000_000))
    throw new UsageError("--publish-rate must be a number of publishes per second, above 0");
  const burst = values["publish-burst"] === undefined ? null : Number(values["publish-burst"]);
  if (burst !== null && (rate === null || !Number.isInteger(burst) || burst < 1))
    throw new UsageError("--publish-burst needs --publish-rate and is a whole number ≥ 1");
  return { command: "create", roles: roles as ApiRole[], groups, name, publishRate: rate, publishBurst: burst };
}

/**
 * Reads `npm run keys -- <command> …` without touching Postgres, so a mistyped line fails before
 * a connection is tried. `--help`, `-h` or `help` anywhere asks for the usage, as other tools do.
 */
export function parseKeysArgs(argv: readonly string[]): KeysCommand {
  const [command, ...rest] = argv;
  if (command === "help" || argv.includes("--help") || argv.includes("-h")) return { command: "help" };
  if (command === "create") return createOptions(rest);
  if (command === "list") return { command: "list" };
  if (command === "revoke") {
    const id = rest[0] ?? "";
    if (!/^[0-9a-f]{12}$/.test(id)) throw new UsageError("revoke needs the key's id (12 hex digits, as list shows)");
    return { command: "revoke", id };
  }
  throw new UsageError(command ? `unknown command ${command}` : "no command");
}
