import { logTopicName, silentLogger } from "@evb/domain";
import { createKafka, LogInspector } from "@evb/eventlog";
import pg from "pg";

/** Rows in every table a request can add to, and the end offsets of the groups' Kafka logs. */
export type WriteCounts = Record<string, number>;

const TABLES = ["topics", "blocks", "events", "subscriptions", "subscription_backlog"];

/** Everything a refused request must leave unchanged, read from the system's own schema and log topics. */
export async function writeCounts(env: Record<string, string>, groups: readonly string[]): Promise<WriteCounts> {
  const out: WriteCounts = {};
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    for (const table of TABLES) {
      const r = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${env.DATABASE_SCHEMA}"."${table}"`);
      out[table] = Number(r.rows[0]?.n);
    }
  } finally {
    await client.end();
  }
  const kafka = createKafka({ brokers: (env.KAFKA_BROKERS as string).split(","), clientId: "fuzz-offsets", logger: silentLogger });
  const inspector = new LogInspector({ kafka });
  try {
    for (const g of groups) {
      const offsets = await inspector.offsets(logTopicName(env.KAFKA_TOPIC_PREFIX as string, g));
      out[`kafka log of group ${g}`] = offsets.reduce((sum, p) => sum + p.high, 0);
    }
  } finally {
    await inspector.close();
  }
  return out;
}
