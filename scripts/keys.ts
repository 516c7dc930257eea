/**
 * `npm run keys`: creates, lists and revokes API keys (docs/security.md) in the ledger's
 * Postgres, found through DATABASE_URL and DATABASE_SCHEMA as the services find it.
 *
 *   npm run keys -- create --roles publish,read --groups 1,2 --name ci [--publish-rate 50 --publish-burst 100]
 *   npm run keys -- list
 *   npm run keys -- revoke <id>
 *   npm run keys -- --help
 *
 * The key is printed once, by `create`; only its hash is stored. Gateways see a new or revoked
 * key within API_KEY_CACHE_MS. The command line is read in keys/args.ts, before any connection.
 */
import pg from "pg";
import { parseEnv } from "@evb/config";
import { silentLogger } from "@evb/domain";
import { postgresSsl } from "@evb/runtime";
import { type ApiKeyRecord, ApiKeyStore, migrate, newApiKey, poolOptions } from "@evb/storage";
import { GatewayEnv } from "../services/gateway/src/config.ts";
import { type KeysCommand, parseKeysArgs, USAGE, UsageError } from "./keys/args.ts";

/** The gateway's own Postgres settings, so the keys land where the gateways look. */
const KeysEnv = GatewayEnv.pick({
  DATABASE_URL: true,
  DATABASE_SCHEMA: true,
  DATABASE_QUERY_TIMEOUT_MS: true,
  DATABASE_SSL: true,
  DATABASE_SSL_CA_FILE: true,
});

function fail(msg: string): never {
  process.stderr.write(`keys: ${msg}\n${USAGE}\n`);
  process.exit(2);
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

let cmd: KeysCommand;
try {
  cmd = parseKeysArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  fail(err.message);
}
if (cmd.command === "help") {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let env: ReturnType<typeof KeysEnv.parse>;
try {
  env = parseEnv("keys", KeysEnv);
} catch (err) {
  fail((err as Error).message);
}
const ssl = (() => {
  try {
    return postgresSsl({ ...env, REDIS_TLS_CA_FILE: undefined, REDIS_URL: "redis://unused" });
  } catch (err) {
    fail((err as Error).message);
  }
})();
const pool = new pg.Pool({
  ...poolOptions(env.DATABASE_URL, env.DATABASE_SCHEMA, 1, env.DATABASE_QUERY_TIMEOUT_MS),
  ...(ssl ? { ssl } : {}),
});
try {
  await migrate(pool, env.DATABASE_SCHEMA, silentLogger);
  const store = new ApiKeyStore(pool);
  if (cmd.command === "create") {
    const { command: _create, ...options } = cmd;
    const made = newApiKey();
    const k = await store.create({ id: made.id, secretSha256: made.secretSha256, ...options, now: Date.now() });
    process.stderr.write(`created ${describe(k)}\nThe key, shown only now (send it as "Authorization: Bearer <key>"):\n`);
    process.stdout.write(`${made.key}\n`);
  } else if (cmd.command === "list") {
    for (const k of await store.list()) process.stdout.write(`${describe(k)}\n`);
  } else {
    const { id } = cmd;
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
