/**
 * `npm run kafka`: only the local Kafka broker (KRaft, from the Maven Central jars), on
 * 127.0.0.1:9092 by default, data kept in .cache/kafka. Useful to run test files against one
 * long-lived broker: `KAFKA_BROKERS=127.0.0.1:9092 npx vitest run test/x.int.test.ts`.
 */
import { join } from "node:path";
import { consoleProgress, describeTakenPorts, KafkaCluster, takenPorts } from "@evb/devstack";

const root = join(import.meta.dirname, "..");
const brokers = Number(process.env.START_KAFKA_BROKERS ?? 1);
const basePort = Number(process.env.KAFKA_PORT ?? 9092);
// A broker already on these ports (another npm run kafka or npm start) is named, not fought over.
const taken = await takenPorts(
  "127.0.0.1",
  Array.from({ length: brokers }, (_, i) => [
    { port: basePort + i, purpose: `Kafka broker ${i + 1}` },
    { port: basePort + 100 + i, purpose: `Kafka controller ${i + 1}` },
  ]).flat(),
);
if (taken.length > 0) {
  process.stderr.write(`npm run kafka: ${describeTakenPorts(taken)}\nStop it, or choose other ports with KAFKA_PORT.\n`);
  process.exit(1);
}
const cluster = new KafkaCluster({
  dir: join(process.env.STACK_DIR ?? join(root, ".cache"), "kafka"),
  brokers,
  basePort,
  progress: consoleProgress,
});
const stop = async () => {
  await cluster.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
try {
  const brokers = await cluster.start();
  consoleProgress(`ready: KAFKA_BROKERS=${brokers.join(",")} (Ctrl-C stops it)`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  await cluster.stop();
  process.exit(1);
}
