import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadIndexerConfig } from "../../services/indexer/src/config.ts";
import { readCompose } from "./compose-fixture.ts";
import { composeEnv } from "./compose-model.ts";
import { checkKubernetes } from "./kubernetes-check.ts";
import { container, DIR, envOf, exampleSecret, find, image, OVERLAYS, options, rendered } from "./kubernetes-fixtures.ts";
import { schemaProblems } from "./kubernetes-schema.ts";
import { type Container, type K8sObject, podSpecOf, readYaml, renderKustomization } from "./kustomize-render.ts";

// No kubectl or cluster here, so the manifests are checked statically: each kustomization is
// rendered by a small renderer of the subset they use, every object is validated against the
// Kubernetes API schemas (kubernetes-models), and every pod the cluster would run is checked
// against what its service accepts and needs, through the service's own config loader.
// kubernetes-breaks.test.ts breaks the manifests one way at a time and expects each check to say so.

describe("deploy/kubernetes", () => {
  it("renders the base and each overlay into objects the Kubernetes API schemas accept", () => {
    for (const dir of ["base", "overlays/in-cluster", "overlays/external"]) {
      const objects = renderKustomization(join(DIR, dir));
      expect(objects.length, dir).toBeGreaterThan(0);
      expect(objects.flatMap(schemaProblems), dir).toEqual([]);
    }
    for (const o of OVERLAYS) expect(schemaProblems(readYaml(join(DIR, "overlays", o, "secret.example.yaml"))[0] as K8sObject)).toEqual([]);
  });

  it.each(OVERLAYS)("%s passes every check against the services' configuration", (overlay) => {
    expect(checkKubernetes(rendered[overlay], options(overlay))).toEqual([]);
  });

  it("runs in-cluster stores as docker-compose.yml does, and none with external ones", () => {
    const images = (objects: K8sObject[]) =>
      objects.flatMap((o) => ((podSpecOf(o)?.spec.containers as Container[]) ?? []).map((c) => c.image));
    expect(find(rendered["in-cluster"], "StatefulSet", "kafka").spec.replicas).toBe(3);
    expect(images(rendered["in-cluster"])).toContain("apache/kafka:4.1.2");
    expect(images(rendered["in-cluster"]).filter((i) => /^(postgres|redis):/.test(i))).toHaveLength(2);
    expect(images(rendered.external).every((i) => i === "event-broker:local")).toBe(true);
    const kafkaEnv = Object.fromEntries(envOf(rendered["in-cluster"], "StatefulSet", "kafka").map((e) => [e.name, e.value]));
    expect(kafkaEnv.KAFKA_MIN_INSYNC_REPLICAS).toBe("2");
    expect(find(rendered.external, "ConfigMap", "evb-config").data).toMatchObject({ KAFKA_REPLICATION_FACTOR: "3" });
  });

  it("agrees with docker-compose.yml on the Kafka cluster's settings and on what the services share", () => {
    const compose = readCompose();
    const kafka1 = compose.services["kafka-1"] ?? {};
    const composeKafka = composeEnv(kafka1);
    const kafkaEnv = Object.fromEntries(envOf(rendered["in-cluster"], "StatefulSet", "kafka").map((e) => [e.name, e.value]));
    expect(container(rendered["in-cluster"], "StatefulSet", "kafka").image).toBe(kafka1.image);
    // Node ids, listeners and the voter list name pods instead of compose services; the rest is the same.
    const own =
      /^(KAFKA_NODE_ID|KAFKA_LISTENERS|KAFKA_ADVERTISED_LISTENERS|KAFKA_CONTROLLER_QUORUM_VOTERS|KAFKA_LISTENER_SECURITY_PROTOCOL_MAP|KAFKA_LOG_DIRS|CLUSTER_ID)$/;
    for (const [k, v] of Object.entries(composeKafka)) if (!own.test(k)) expect(kafkaEnv[k], k).toBe(v);
    const shared = find(rendered["in-cluster"], "ConfigMap", "evb-config").data as Record<string, string>;
    const gateway = composeEnv(compose.services["gateway-1"] ?? {});
    for (const k of ["DATABASE_SCHEMA", "KAFKA_TOPIC_PREFIX", "KAFKA_PARTITIONS", "KAFKA_REPLICATION_FACTOR", "REDIS_PREFIX", "GROUP_IDS"])
      expect(shared[k], k).toBe(gateway[k]);
  });

  it("gives each indexer pod its ordinal as SEALER_INDEX and its IP as INSTANCE_ADDRESS, with none set by hand", () => {
    const env = envOf(rendered["in-cluster"], "StatefulSet", "indexer");
    expect(env.map((e) => e.name)).not.toContain("SEALER_INDEX");
    expect(env.map((e) => e.name)).not.toContain("INSTANCE_ADDRESS");
    const base = { ...image.env, HEALTH_PORT: "9000", DATABASE_URL: "postgres://evb@postgres:5432/evb" };
    expect(loadIndexerConfig({ ...base, POD_NAME: "indexer-0", POD_IP: "10.0.0.5" })).toMatchObject({
      SEALER_INDEX: 0,
      INSTANCE_ADDRESS: "10.0.0.5:9000",
    });
    expect(loadIndexerConfig({ ...base, POD_NAME: "indexer-1", POD_IP: "10.0.0.6" })).toMatchObject({
      SEALER_INDEX: 1,
      INSTANCE_ADDRESS: "10.0.0.6:9000",
    });
    expect(loadIndexerConfig({ ...base, POD_NAME: "indexer-1", SEALER_INDEX: "7" }).SEALER_INDEX).toBe(7);
  });

  it("stops every service at start while the Secret still holds the example's placeholders", () => {
    const problems = checkKubernetes(rendered["in-cluster"], options("in-cluster", exampleSecret("in-cluster", false)));
    const refusal = (kind: string, variable: string) =>
      problems.some((p) => p.startsWith(kind) && p.includes(`- ${variable} (value hidden)`));
    for (const kind of ["gateway", "indexer", "notifier"]) expect(refusal(kind, "SECRETS_KEY"), kind).toBe(true);
    expect(refusal("notifier", "WEBHOOK_SECRETS")).toBe(true);
  });
});
