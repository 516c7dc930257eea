/**
 * `npm run keys`: creates, lists and revokes API keys (docs/security.md) in the ledger's
 * Postgres, found through DATABASE_URL and DATABASE_SCHEMA as the services find it.
 *
 *   npm run keys -- create --roles publish,read --groups 1,2 --name ci [--publish-rate 50 --publish-burst 100]
 *   npm run keys -- list
 *   npm run keys -- revoke <id>
 *
 * The key is printed once, by `create`; only its hash is stored. Gateways see a new or revoked
 * key within API_KEY_CACHE_MS.
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { parseEnv } from "@evb/config";
import { silentLogger } from "@evb/domain";
import { API_ROLES, type ApiKeyRecord, type ApiRole, ApiKeyStore, migrate, newApiKey, poolOptions } from "@evb/storage";
import { GatewayEnv } from "../services/gateway/src/config.ts";

const USAGE = `usage:
  npm run keys -- create --roles <publish,subscribe,read,admin> --groups <1,2|*> --name <name> [--publish-rate <per second> [--publish-burst <n>]]
  npm run keys -- list
  npm run keys -- revoke <id>`;

/** The gateway's own Postgres settings, so the keys land where the gateways look. */
const KeysEnv = GatewayEnv.pick({ DATABASE_URL: true, DATABASE_SCHEMA: true, DATABASE_QUERY_TIMEOUT_MS: true });

function fail(msg: string): never {
  process.stderr.write(`keys: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

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

function createOptions(argv: string[]) {
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof CREATE_OPTIONS }>>["values"];
  try {
    values = parseArgs({ args: argv, options: CREATE_OPTIONS }).values;
  } catch (err) {
    fail((err as Error).message);
  }
  const roles = list(values.roles);
  if (roles.length === 0 || !roles.every((r): r is ApiRole => (API_ROLES as readonly string[]).includes(r)))
    fail(`--roles must list some of ${API_ROLES.join(", ")}`);
  const groups = list(values.groups);
  if (groups.length === 0 || !groups.every((g) => g === "*" || /^[A-Za-z0-9_-]{1,32}$/.test(g))) fail("--groups must list group ids, or *");
  const name = values.name?.trim() ?? "";
  if (name === "") fail("--name must say whose key it is");
  const rate = values["publish-rate"] === undefined ? null : Number(values["publish-rate"]);
  if (rate !== null && !(rate > 0 && rate <= 1_000_000)) fail("--publish-rate must be a number of publishes per second, above 0");
  const burst = values["publish-burst"] === undefined ? null : Number(values["publish-burst"]);
  if (burst !== null && (rate === null || !Number.isInteger(burst) || burst < 1))
    fail("--publish-burst needs --publish-rate and is a whole number ≥ 1");
  return { roles: roles as ApiRole[], groups, name, publishRate: rate, publishBurst: burst };
}

const describe = (k: ApiKeyRecord) =>
  [
    k.id,
    k.name,
    `roles=${k.roles.join(",")}`,
    `groups=${k.groups.join(",")}`,
    `publish-rate=${k.publishRate === null ? "unlimited" : `${k.publishRate}/s burst ${k.publishBurst ?? Math.max(1, Math.ceil(k.publishRate))}`}`,
    `created=${new Date(k.createdAt).toISOString()}`,
    k.revokedAt === null ? "live" : `revoked=${new Date(k.revokedAt).toISOString()}`,
  ].join("\t");

const [command, ...rest] = process.argv.slice(2);
if (command !== "create" && command !== "list" && command !== "revoke") fail(command ? `unknown command ${command}` : "no command");
const options = command === "create" ? createOptions(rest) : null;
if (command === "revoke" && !/^[0-9a-f]{12}$/.test(rest[0] ?? "")) fail("revoke needs the key's id (12 hex digits, as list shows)");

let env: ReturnType<typeof KeysEnv.parse>;
try {
  env = parseEnv("keys", KeysEnv);
} catch (err) {
  fail((err as Error).message);
}
const pool = new pg.Pool(poolOptions(env.DATABASE_URL, env.DATABASE_SCHEMA, 1, env.DATABASE_QUERY_TIMEOUT_MS));
try {
  await migrate(pool, env.DATABASE_SCHEMA, silentLogger);
  const store = new ApiKeyStore(pool);
  if (options) {
    const made = newApiKey();
    const k = await store.create({ id: made.id, secretSha256: made.secretSha256, ...options, now: Date.now() });
    process.stderr.write(`created ${describe(k)}\nThe key, shown only now (send it as "Authorization: Bearer <key>"):\n`);
    process.stdout.write(`${made.key}\n`);
  } else if (command === "list") {
    for (const k of await store.list()) process.stdout.write(`${describe(k)}\n`);
  } else {
    const id = rest[0] as string;
    if (!(await store.revoke(id, Date.now()))) fail(`no live key ${id}`);
    process.stderr.write(`revoked ${id}; gateways refuse it within API_KEY_CACHE_MS\n`);
  }
} catch (err) {
  // The message of a pg error names no password; the URL is not echoed.
  process.stderr.write(`keys: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
