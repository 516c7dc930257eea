import { type ComposeService, composeEnv, kafkaListeners, kafkaVoters } from "./compose-model.ts";

/** One KRaft quorum: the voter list names exactly the brokers of this file, by their node ids and controller ports. */
export function checkKafka(
  services: Record<string, ComposeService>,
  kafka: string[],
  instances: Array<{ name: string; config: Record<string, unknown> }>,
  problems: string[],
): void {
  if (kafka.length === 0) {
    problems.push("no apache/kafka service");
    return;
  }
  const envs = new Map(kafka.map((n) => [n, composeEnv(services[n] as ComposeService)]));
  const expected = new Set<string>();
  const ids = new Map<number, string>();
  const same = (variable: string) => {
    const values = new Set(kafka.map((n) => envs.get(n)?.[variable]));
    if (values.size !== 1) problems.push(`kafka: ${variable} differs between ${kafka.join(", ")}`);
  };
  same("CLUSTER_ID");
  same("KAFKA_CONTROLLER_QUORUM_VOTERS");
  const clusterId = envs.get(kafka[0] as string)?.CLUSTER_ID ?? "";
  if (!/^[A-Za-z0-9_-]{22}$/.test(clusterId)) problems.push(`kafka: CLUSTER_ID "${clusterId}" is not a 22-character base64url id`);
  for (const n of kafka) {
    const env = envs.get(n) ?? {};
    const id = Number(env.KAFKA_NODE_ID);
    if (!Number.isInteger(id)) problems.push(`${n}: KAFKA_NODE_ID is not set to a number`);
    if (ids.has(id)) problems.push(`${n}: KAFKA_NODE_ID ${id} is also ${ids.get(id)}'s`);
    ids.set(id, n);
    const controllerName = env.KAFKA_CONTROLLER_LISTENER_NAMES?.split(",")[0] ?? "";
    const controller = kafkaListeners(env.KAFKA_LISTENERS).get(controllerName);
    if (!controller) problems.push(`${n}: KAFKA_LISTENERS has no ${controllerName || "controller"} listener`);
    if (!env.KAFKA_PROCESS_ROLES?.split(",").includes("controller")) problems.push(`${n}: KAFKA_PROCESS_ROLES lacks controller`);
    expected.add(`${id}@${n}:${controller?.port}`);
  }
  const voters = kafkaVoters(envs.get(kafka[0] as string)?.KAFKA_CONTROLLER_QUORUM_VOTERS);
  const listed = new Set(
    voters.map(
      (v) =>
        `${v.id}@${services[v.host] ? v.host : (Object.keys(services).find((s) => services[s]?.hostname === v.host) ?? v.host)}:${v.port}`,
    ),
  );
  for (const e of expected) if (!listed.has(e)) problems.push(`kafka: KAFKA_CONTROLLER_QUORUM_VOTERS lacks ${e}`);
  for (const l of listed)
    if (!expected.has(l)) problems.push(`kafka: KAFKA_CONTROLLER_QUORUM_VOTERS names ${l}, which is no broker of this file`);

  const brokers = kafka.length;
  const minIsr = Number(envs.get(kafka[0] as string)?.KAFKA_MIN_INSYNC_REPLICAS ?? 1);
  for (const n of kafka) {
    for (const v of [
      "KAFKA_DEFAULT_REPLICATION_FACTOR",
      "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
      "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
    ]) {
      const rf = Number(envs.get(n)?.[v] ?? 1);
      if (rf > brokers) problems.push(`${n}: ${v}=${rf} exceeds the ${brokers} broker(s)`);
    }
  }
  for (const i of instances) {
    const rf = Number(i.config.KAFKA_REPLICATION_FACTOR);
    if (rf > brokers)
      problems.push(`${i.name}: KAFKA_REPLICATION_FACTOR=${rf} exceeds the ${brokers} Kafka broker(s); topic creation would fail`);
    if (brokers > 1 && minIsr >= rf) {
      problems.push(
        `${i.name}: KAFKA_REPLICATION_FACTOR=${rf} with min.insync.replicas ${minIsr} refuses every publish while one broker is down`,
      );
    }
  }
}
