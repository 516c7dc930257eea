import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { consoleProgress, type Stack, startStack } from "@evb/devstack";

declare module "vitest" {
  interface ProvidedContext {
    kafkaBrokers: string;
    databaseUrl: string;
    redisUrl: string;
  }
}

let stack: Stack | undefined;

/**
 * Integration tests talk to real Kafka, Postgres and Redis: KAFKA_BROKERS / DATABASE_URL /
 * REDIS_URL when set, otherwise the same local stack `npm start` uses, with its own Kafka on
 * port 19092 (fresh data each run) so that it never collides with a running `npm start`.
 * Every test isolates itself by unique schema, topic prefix and Redis prefix.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = join(import.meta.dirname, "..");
  stack = await startStack({
    dir: process.env.STACK_DIR ?? join(root, ".cache"),
    kafkaBrokers: process.env.KAFKA_BROKERS,
    databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    kafka: { brokers: 1, basePort: 19092, fresh: true, heap: "768m", folder: "kafka-test" },
    progress: consoleProgress,
  });
  project.provide("kafkaBrokers", stack.kafkaBrokers);
  project.provide("databaseUrl", stack.databaseUrl);
  project.provide("redisUrl", stack.redisUrl);
  return async () => {
    await stack?.stop();
  };
}
