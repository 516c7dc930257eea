import { join } from "node:path";
import pg from "pg";
import { Child, freePort, type ServiceName, startServiceProcess } from "@evb/devstack";
import { type ChainRecord, chainTopicName, decodeChainRecord, silentLogger } from "@evb/domain";
import { createKafka, LogInspector, readOffsetRanges } from "@evb/eventlog";
import { waitUntil } from "./publish-stream.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const LOG_DIR = join(ROOT, ".cache", "test-logs");

export interface Service {
  child: Child;
  /** Origin of a gateway, e.g. http://127.0.0.1:1234. */
  origin: string;
  healthUrl: string;
}

/**
 * Starts one service of a test system's environment under a new name, with `extra` over it (a
 * different KAFKA_BROKERS, say). `ready: false` waits only until the health endpoint answers
 * at all (an indexer that refuses a log answers 503), instead of for a 200.
 */
export async function spawnService(
  env: Record<string, string>,
  name: string,
  service: ServiceName,
  extra: Record<string, string> = {},
  ready = true,
): Promise<Service> {
  const port = await freePort();
  const full = { ...env, HOST: "127.0.0.1", ...extra, ...(service === "gateway" ? { PORT: String(port) } : { HEALTH_PORT: String(port) }) };
  const healthUrl = `http://127.0.0.1:${port}/health`;
  const output = { file: join(LOG_DIR, `${env.REDIS_PREFIX}-${name}.log`) };
  if (ready) {
    const child = await startServiceProcess({ name, service, env: full, healthUrl, output });
    return { child, origin: `http://127.0.0.1:${port}`, healthUrl };
  }
  const child = new Child({
    name,
    command: process.execPath,
    args: ["--disable-warning=TimeoutNegativeWarning", join(ROOT, "services", service, "src", "main.ts")],
    env: { ...process.env, ...full },
    cwd: ROOT,
    output,
  });
  await waitUntil(`${name} answers ${healthUrl}`, async () => {
    if (!child.running) throw new Error(`${name} exited during start:\n${child.lastOutput()}`);
    return fetch(healthUrl, { signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    );
  });
  return { child, origin: `http://127.0.0.1:${port}`, healthUrl };
}

/** One group's blocks as the ledger holds them: height → hash. */
export async function blockHashes(env: Record<string, string>, groupId = "1"): Promise<Map<number, string>> {
  const client = new pg.Client({ connectionString: env.DATABASE_URL, options: `-c search_path="${env.DATABASE_SCHEMA}"` });
  await client.connect();
  try {
    const rows = await client.query<{ height: string; hash: string }>(
      "SELECT height, hash FROM blocks WHERE group_id = $1 ORDER BY height",
      [groupId],
    );
    return new Map(rows.rows.map((r) => [Number(r.height), r.hash]));
  } finally {
    await client.end();
  }
}

/** Runs SQL in a test system's schema. */
export async function inSchema<T>(env: Record<string, string>, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: env.DATABASE_URL, options: `-c search_path="${env.DATABASE_SCHEMA}"` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Every chain record in a group's chain topic (read to its end), by height; the last write of a height wins. */
export function readChainRecords(env: Record<string, string>, groupId = "1"): Promise<Map<number, ChainRecord>> {
  return readChainTopic(env, groupId, decodeChainRecord, (r) => r.height);
}

/**
 * Reads a group's chain topic to its end with a throwaway consumer and keeps what `decode`
 * recognises, by `keyOf` (the last write of a key wins).
 */
export async function readChainTopic<T, K>(
  env: Record<string, string>,
  groupId: string,
  decode: (value: Buffer | null) => T | null,
  keyOf: (record: T) => K,
): Promise<Map<K, T>> {
  const kafka = createKafka({ brokers: (env.KAFKA_BROKERS as string).split(","), clientId: "test-chain-reader", logger: silentLogger });
  const topic = chainTopicName(env.KAFKA_TOPIC_PREFIX as string, groupId);
  const inspector = new LogInspector({ kafka });
  const [ends] = await inspector.offsets(topic).finally(() => inspector.close());
  const out = new Map<K, T>();
  if (!ends || ends.high <= ends.low) return out;
  const read = await readOffsetRanges(kafka, topic, new Map([[0, { from: ends.low, to: ends.high - 1 }]]));
  for (const m of read.get(0) ?? []) {
    const r = decode(m.value);
    if (r) out.set(keyOf(r), r);
  }
  return out;
}

/**
 * Drops the deployment's schema under the running services, as an operator would. DROP SCHEMA
 * takes its tables' locks one by one while the services use them: Postgres may end it as a
 * deadlock's victim (40P01), as it would an operator's; it is tried again, as they would.
 */
export async function dropSchema(env: Record<string, string>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await inSchema(env, (c) => c.query(`DROP SCHEMA "${env.DATABASE_SCHEMA}" CASCADE`));
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== "40P01" || attempt >= 10) throw err;
    }
  }
}
