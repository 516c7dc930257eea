import { existsSync, readFileSync } from "node:fs";
import { join, matchesGlob } from "node:path";
import { describe, expect, it } from "vitest";
import { GatewayEnv } from "../../services/gateway/src/config.ts";
import { type CheckOptions, checkCompose } from "./compose-check.ts";
import { readCompose } from "./compose-fixture.ts";
import { type ComposeDoc, type ComposeService, composeEnv, dockerIgnored, parseDockerfile } from "./compose-model.ts";
import { HAPROXY_CFG } from "./haproxy-check.ts";
import { SERVICE_SCHEMAS } from "./service-schemas.ts";

// No Docker engine runs here, so the deployment is checked statically: the compose file is
// parsed and every project container's environment goes through the same schema the service
// parses at start.
const ROOT = join(import.meta.dirname, "..", "..");
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");
const image = parseDockerfile(read("Dockerfile"));
const options: CheckOptions = { schemas: SERVICE_SCHEMAS, image, root: ROOT, haproxy: read(HAPROXY_CFG) };
const compose = readCompose();

/** A deep copy without shared anchors, so a mutation touches one service only. */
const copy = (): ComposeDoc => JSON.parse(JSON.stringify(compose)) as ComposeDoc;
const envOf = (doc: ComposeDoc, svc: string) => doc.services[svc]?.environment as Record<string, string | null>;

describe("docker-compose.yml", () => {
  it("passes every check against the services' configuration schemas", () => {
    expect(checkCompose(compose, options)).toEqual([]);
  });

  it("runs a 3-broker KRaft cluster of the official image, Postgres 17 and Redis 7.4 as deploy/kubernetes does", () => {
    const images = Object.values(compose.services).map((s) => s.image);
    expect(images.filter((i) => i?.startsWith("apache/kafka:4.1."))).toHaveLength(3);
    expect(images).toContain("postgres:17");
    expect(images).toContain("redis:7.4");
    const kafka1 = composeEnv(compose.services["kafka-1"] ?? {});
    expect(kafka1.KAFKA_MIN_INSYNC_REPLICAS).toBe("2");
    expect(kafka1.KAFKA_LOG_DIRS).toBe("/var/lib/kafka/data");
    expect(composeEnv(compose.services["gateway-1"] ?? {}).KAFKA_REPLICATION_FACTOR).toBe("3");
  });

  // Each case breaks the real file in one way; the checks must name it, or they prove nothing.
  type Mutation = (d: ComposeDoc) => void;
  const setEnv =
    (svcs: string[], key: string, value: string): Mutation =>
    (d) => {
      for (const s of svcs) envOf(d, s)[key] = value;
    };
  const unsetEnv =
    (svc: string, key: string): Mutation =>
    (d) => {
      delete envOf(d, svc)[key];
    };
  const removeService =
    (svc: string): Mutation =>
    (d) => {
      delete d.services[svc];
    };
  const setField =
    (svc: string, field: keyof ComposeService, value: unknown): Mutation =>
    (d) => {
      const s = d.services[svc] as Record<string, unknown>;
      if (value === undefined) delete s[field];
      else s[field] = value;
    };
  const instances = ["gateway-1", "gateway-2", "indexer-1", "indexer-2", "notifier-1", "notifier-2"];
  const brokers = ["kafka-1", "kafka-2", "kafka-3"];
  const cases: Array<[string, Mutation, string]> = [
    [
      "a gateway PORT that its healthcheck and mapping do not use",
      setEnv(["gateway-1"], "PORT", "8090"),
      "gateway-1: healthcheck requests",
    ],
    ["a PORT that is not a number", setEnv(["gateway-2"], "PORT", "abc"), 'PORT ("abc")'],
    ["two indexers with one SEALER_INDEX", setEnv(["indexer-2"], "SEALER_INDEX", "0"), "indexer-2: SEALER_INDEX=0 is also indexer-1's"],
    ["two gateways with one INSTANCE_ADDRESS", setEnv(["gateway-2"], "INSTANCE_ADDRESS", "gateway-1:8080"), "gateway-2: INSTANCE_ADDRESS"],
    ["a gateway without INSTANCE_ADDRESS", unsetEnv("gateway-1", "INSTANCE_ADDRESS"), "gateway-1: INSTANCE_ADDRESS is unset"],
    [
      "an INSTANCE_ADDRESS naming another service",
      setEnv(["indexer-2"], "INSTANCE_ADDRESS", "indexer-1:9000"),
      "indexer-2: INSTANCE_ADDRESS=indexer-1:9000 does not reach",
    ],
    ["an instance with other GROUP_IDS", setEnv(["notifier-2"], "GROUP_IDS", "1,2"), "notifier-2: GROUP_IDS"],
    [
      "an instance still setting the old GROUPS",
      setEnv(["gateway-2"], "GROUPS", "1,2"),
      'gateway-2: GROUPS="1,2" is ignored because GROUP_IDS="1" is set',
    ],
    ["an instance with another topic prefix", setEnv(["indexer-1"], "KAFKA_TOPIC_PREFIX", "x."), "indexer-1: KAFKA_TOPIC_PREFIX"],
    ["an instance with another Redis prefix", setEnv(["gateway-2"], "REDIS_PREFIX", "x"), "gateway-2: REDIS_PREFIX"],
    [
      "notifiers signing with different secrets",
      setEnv(["notifier-2"], "WEBHOOK_SECRETS", "whsec_c2VjcmV0LWtleS0xMjM0NTY3OA=="),
      "notifier-2: WEBHOOK_SECRETS",
    ],
    ["an instance with another schema", setEnv(["indexer-2"], "DATABASE_SCHEMA", "other"), "indexer-2: DATABASE_SCHEMA"],
    [
      "DATABASE_URL left at its loopback default",
      unsetEnv("notifier-1", "DATABASE_URL"),
      'notifier-1: DATABASE_URL names host "127.0.0.1"',
    ],
    [
      "a REDIS_URL host that is no service",
      setEnv(["gateway-1"], "REDIS_URL", "redis://cache:6379"),
      'gateway-1: REDIS_URL names host "cache"',
    ],
    [
      "KAFKA_BROKERS on the controller port",
      setEnv(["indexer-1"], "KAFKA_BROKERS", "kafka-1:9093"),
      "indexer-1: KAFKA_BROKERS kafka-1:9093 is not",
    ],
    [
      "KAFKA_BROKERS on the host-side listener",
      setEnv(["indexer-1"], "KAFKA_BROKERS", "kafka-2:39092"),
      "indexer-1: KAFKA_BROKERS kafka-2:39092 is not",
    ],
    [
      "KAFKA_BROKERS naming no broker",
      setEnv(["gateway-2"], "KAFKA_BROKERS", "kafka-9:9092"),
      'gateway-2: KAFKA_BROKERS names host "kafka-9"',
    ],
    [
      "a voter list without kafka-3",
      setEnv(brokers, "KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka-1:9093,2@kafka-2:9093"),
      "KAFKA_CONTROLLER_QUORUM_VOTERS lacks 3@kafka-3:9093",
    ],
    [
      "voter lists that differ",
      setEnv(["kafka-2"], "KAFKA_CONTROLLER_QUORUM_VOTERS", "2@kafka-2:9093"),
      "KAFKA_CONTROLLER_QUORUM_VOTERS differs",
    ],
    ["a duplicate node id", setEnv(["kafka-3"], "KAFKA_NODE_ID", "2"), "kafka-3: KAFKA_NODE_ID 2 is also kafka-2's"],
    ["a CLUSTER_ID that differs", setEnv(["kafka-1"], "CLUSTER_ID", "AAAAAAAAAAAAAAAAAAAAAA"), "CLUSTER_ID differs"],
    [
      "a replication factor above the broker count",
      setEnv(instances, "KAFKA_REPLICATION_FACTOR", "4"),
      "KAFKA_REPLICATION_FACTOR=4 exceeds the 3 Kafka broker(s)",
    ],
    ["a removed broker", removeService("kafka-3"), "exceeds the 2 Kafka broker(s)"],
    ["a dependency on a removed service", removeService("redis"), "gateway-1: depends_on redis, which is no service"],
    ["a single indexer", removeService("indexer-2"), "indexer: 1 instance(s)"],
    [
      "two gateways on one host port",
      setField("gateway-2", "ports", ["8081:8080"]),
      "gateway-2: host port 8081 is already published by gateway-1",
    ],
    ["a service bound to loopback", setEnv(["indexer-1"], "HOST", "127.0.0.1"), "indexer-1: HOST=127.0.0.1"],
    [
      "a notifier health port its healthcheck does not use",
      setEnv(["notifier-1"], "HEALTH_PORT", "9001"),
      "notifier-1: healthcheck requests",
    ],
    [
      "a dependency not waited for until healthy",
      setField("gateway-1", "depends_on", ["kafka-1", "kafka-2", "kafka-3", "postgres", "redis"]),
      "gateway-1: DATABASE_URL uses postgres, so depends_on postgres needs condition: service_healthy",
    ],
    ["a service without healthcheck", setField("redis", "healthcheck", undefined), "redis: has no healthcheck"],
    ["a command that runs no service", setField("notifier-2", "command", ["services/nope/src/main.ts"]), "notifier-2: command"],
  ];
  it.each(cases)("fails on %s", (_name, mutate, expected) => {
    const doc = copy();
    mutate(doc);
    const problems = checkCompose(doc, options);
    expect(problems.join("\n")).toContain(expected);
  });

  it("fails when a service gains a required variable the file does not set", () => {
    // As when someone adds a variable without a default to a schema and forgets the compose file.
    const schemas = { ...SERVICE_SCHEMAS, gateway: GatewayEnv.extend({ SIGNING_SECRET: GatewayEnv.shape.HOST.unwrap() }) };
    const problems = checkCompose(copy(), { ...options, schemas });
    expect(problems).toContain("gateway-1: SIGNING_SECRET is required by the gateway and not set");
    expect(problems).toContain("gateway-2: SIGNING_SECRET is required by the gateway and not set");
  });
});

describe("Dockerfile", () => {
  it("runs the services on Node 24 as a non-root user with a healthcheck and production dependencies only", () => {
    expect(image.from).toMatch(/^node:24(\.|-|$)/);
    expect(image.user).toBeDefined();
    expect(["root", "0"]).not.toContain(image.user);
    expect(image.healthcheck).toContain("scripts/healthcheck.ts");
    expect(read("Dockerfile")).toMatch(/npm ci --omit=dev/);
    expect(image.runs.some((r) => r.includes("scripts/build-info.ts"))).toBe(true);
    const cmd = [...image.entrypoint, ...image.cmd];
    expect(cmd).toContain("--disable-warning=TimeoutNegativeWarning");
    for (const f of [...cmd.filter((a) => a.endsWith(".ts")), "scripts/healthcheck.ts", "scripts/build-info.ts"]) {
      expect(existsSync(join(ROOT, f)), f).toBe(true);
    }
  });

  it(".dockerignore keeps what the services run and leaves out host state", () => {
    const patterns = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    const ignored = (p: string) => dockerIgnored(patterns, p, matchesGlob);
    const needed = [
      "package.json",
      "package-lock.json",
      "build-info.json",
      "scripts/healthcheck.ts",
      "scripts/build-info.ts",
      "services/gateway/src/main.ts",
      "services/indexer/src/main.ts",
      "services/notifier/src/main.ts",
      "packages/config/src/index.ts",
      "packages/storage/migrations/001_ledger.sql",
    ];
    expect(needed.filter(ignored)).toEqual([]);
    const excluded = [
      "node_modules/zod/package.json",
      "services/gateway/node_modules/x",
      ".git/HEAD",
      ".cache/kafka/x",
      "test/foundation.int.test.ts",
    ];
    expect(excluded.filter((p) => !ignored(p))).toEqual([]);
  });
});
