import { describe, expect, it } from "vitest";
import { checkKubernetes } from "./kubernetes-check.ts";
import { container, type EnvVar, exampleSecret, find, type Overlay, options, rendered } from "./kubernetes-fixtures.ts";
import { schemaProblems } from "./kubernetes-schema.ts";
import type { Container, K8sObject } from "./kustomize-render.ts";

describe("the deploy/kubernetes checks", () => {
  // Each case breaks a rendered overlay in one way; the checks must name it, or they prove nothing.
  type Mutation = (objects: K8sObject[]) => void;
  const spec = (kind: string, name: string) => (o: K8sObject[]) => find(o, kind, name).spec;
  const inContainer =
    (kind: string, name: string, change: (c: Container) => void): Mutation =>
    (o) =>
      change(container(o, kind, name));
  const setEnv = (kind: string, name: string, v: string, value: string): Mutation =>
    inContainer(kind, name, (c) => {
      const env = c.env as EnvVar[];
      const i = env.findIndex((e) => e.name === v);
      if (i >= 0) env[i] = { name: v, value };
      else env.push({ name: v, value });
    });
  const dropEnv = (kind: string, name: string, v: string): Mutation =>
    inContainer(kind, name, (c) => {
      c.env = (c.env as EnvVar[]).filter((e) => e.name !== v);
    });
  const setConfig =
    (key: string, value: string): Mutation =>
    (o) => {
      (find(o, "ConfigMap", "evb-config").data as Record<string, string>)[key] = value;
    };
  const remove =
    (kind: string, name: string): Mutation =>
    (o) => {
      o.splice(o.indexOf(find(o, kind, name)), 1);
    };
  const servicePorts = (o: K8sObject[], name: string) => (find(o, "Service", name).spec as { ports: Array<Record<string, unknown>> }).ports;

  const cases: Array<[string, Overlay, Mutation, string]> = [
    [
      "a misspelt probe field",
      "in-cluster",
      inContainer("Deployment", "gateway", (c) => Object.assign(c, { readinesProbe: {} })),
      "unknown field spec.template.spec.containers.0.readinesProbe",
    ],
    [
      "a container port that is not a number",
      "external",
      inContainer("Deployment", "notifier", (c) => Object.assign(c, { ports: [{ name: "health", containerPort: "9000" }] })),
      "containerPort must be integer",
    ],
    [
      "a hand-set SEALER_INDEX",
      "in-cluster",
      setEnv("StatefulSet", "indexer", "SEALER_INDEX", "0"),
      "indexer-0/indexer: sets SEALER_INDEX by hand",
    ],
    [
      "a SEALER_INDEX in the shared ConfigMap",
      "external",
      setConfig("SEALER_INDEX", "1"),
      "gateway-5d8c7b9f6-bxhq/gateway: sets SEALER_INDEX, which the gateway does not read",
    ],
    [
      "a hand-set INSTANCE_ADDRESS",
      "in-cluster",
      setEnv("Deployment", "gateway", "INSTANCE_ADDRESS", "gateway:8080"),
      "sets INSTANCE_ADDRESS by hand",
    ],
    [
      "indexers as a Deployment (no ordinals)",
      "in-cluster",
      (o) => Object.assign(find(o, "StatefulSet", "indexer"), { kind: "Deployment" }),
      "SEALER_INDEX=0 is also indexer-5d8c7b9f6-bxhq/indexer's",
    ],
    [
      "an indexer without POD_NAME",
      "external",
      dropEnv("StatefulSet", "indexer", "POD_NAME"),
      "indexer-0/indexer: POD_NAME must come from the downward API (fieldRef metadata.name)",
    ],
    [
      "POD_IP from the node's address",
      "in-cluster",
      inContainer("Deployment", "gateway", (c) => {
        (c.env as EnvVar[]).splice(
          (c.env as EnvVar[]).findIndex((e) => e.name === "POD_IP"),
          1,
          { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.hostIP" } } },
        );
      }),
      'INSTANCE_ADDRESS="192.168.0.1:8080" is also',
    ],
    [
      "1,025 indexers (sealer numbers end at 1023)",
      "external",
      (o) => Object.assign(spec("StatefulSet", "indexer")(o), { replicas: 1025 }),
      'POD_NAME ("indexer-1024") ends in ordinal 1024',
    ],
    [
      "a variable the service does not read",
      "in-cluster",
      setEnv("Deployment", "gateway", "WEBHOOK_SECRETS", ""),
      "sets WEBHOOK_SECRETS, which the gateway does not read",
    ],
    [
      "a gateway-only variable in the shared ConfigMap",
      "in-cluster",
      setConfig("API_KEYS", "true"),
      "sets API_KEYS, which the indexer does not read",
    ],
    [
      "a PORT that the probes do not ask",
      "in-cluster",
      setEnv("Deployment", "gateway", "PORT", "8090"),
      "readinessProbe asks /readyz on http, but the gateway answers /readyz on 8090 (PORT)",
    ],
    [
      "a readiness probe on /livez",
      "external",
      inContainer("StatefulSet", "indexer", (c) =>
        Object.assign(c.readinessProbe as object, { httpGet: { path: "/livez", port: "health" } }),
      ),
      "readinessProbe asks /livez on health, but the indexer answers /readyz on 9000",
    ],
    [
      "a probe on a port the container lacks",
      "in-cluster",
      inContainer("Deployment", "notifier", (c) =>
        Object.assign(c.livenessProbe as object, { httpGet: { path: "/livez", port: "metrics" } }),
      ),
      "livenessProbe asks port metrics, which the container does not expose",
    ],
    [
      "no liveness probe",
      "in-cluster",
      inContainer("StatefulSet", "redis", (c) => delete c.livenessProbe),
      "StatefulSet/redis/redis: has no livenessProbe",
    ],
    [
      "MQTT on a port the container does not expose",
      "in-cluster",
      setEnv("Deployment", "gateway", "MQTT_PORT", "1884"),
      "exposes container port 1883, which the gateway does not listen on",
    ],
    [
      "a Service port aimed at a missing container port",
      "in-cluster",
      (o) => Object.assign(servicePorts(o, "gateway")[1] as object, { targetPort: "mqtts" }),
      "Service/gateway: port mqtt targets mqtts",
    ],
    [
      "a Service selector that matches nothing",
      "external",
      (o) => Object.assign(find(o, "Service", "gateway").spec, { selector: { "app.kubernetes.io/component": "gw" } }),
      "Service/gateway: selector",
    ],
    [
      "a workload selector its template does not match",
      "in-cluster",
      (o) => Object.assign(spec("Deployment", "notifier")(o), { selector: { matchLabels: { app: "notifier" } } }),
      "Deployment/notifier: selector",
    ],
    [
      "a StatefulSet without its headless Service",
      "in-cluster",
      (o) => Object.assign(spec("StatefulSet", "kafka")(o), { serviceName: "brokers" }),
      "StatefulSet/kafka: serviceName brokers",
    ],
    ["a missing PodDisruptionBudget", "external", remove("PodDisruptionBudget", "gateway"), "Deployment/gateway: no PodDisruptionBudget"],
    [
      "a budget that blocks every drain",
      "in-cluster",
      (o) => Object.assign(spec("PodDisruptionBudget", "indexer")(o), { maxUnavailable: 0 }),
      "PodDisruptionBudget/indexer: allows no disruption",
    ],
    [
      "a budget selecting nothing",
      "in-cluster",
      (o) => Object.assign(spec("PodDisruptionBudget", "kafka")(o), { selector: { matchLabels: { app: "kafka" } } }),
      "PodDisruptionBudget/kafka: selector",
    ],
    ["one notifier", "external", (o) => Object.assign(spec("Deployment", "notifier")(o), { replicas: 1 }), "notifier: 1 pod(s)"],
    ["a service bound to loopback", "in-cluster", setEnv("Deployment", "notifier", "HOST", "127.0.0.1"), "HOST=127.0.0.1"],
    [
      "no memory limit",
      "in-cluster",
      inContainer("StatefulSet", "indexer", (c) => delete (c.resources as { limits?: unknown }).limits),
      "StatefulSet/indexer/indexer: no resources.limits.memory",
    ],
    [
      "an image without a tag",
      "external",
      inContainer("Deployment", "gateway", (c) => Object.assign(c, { image: "event-broker" })),
      "image event-broker has no fixed tag",
    ],
    [
      "a command that runs no service",
      "in-cluster",
      inContainer("Deployment", "notifier", (c) => Object.assign(c, { args: ["services/nope/src/main.ts"] })),
      "command",
    ],
    [
      "a Secret key that does not exist",
      "in-cluster",
      inContainer("Deployment", "notifier", (c) =>
        Object.assign((c.env as EnvVar[]).find((e) => e.name === "WEBHOOK_SECRETS") as object, {
          valueFrom: { secretKeyRef: { name: "evb-secrets", key: "WEBHOOK_SECRET" } },
        }),
      ),
      "refers to key WEBHOOK_SECRET of Secret evb-secrets",
    ],
    [
      "a ConfigMap that does not exist",
      "external",
      inContainer("StatefulSet", "indexer", (c) => Object.assign(c, { envFrom: [{ configMapRef: { name: "evb-settings" } }] })),
      "refers to ConfigMap evb-settings",
    ],
    [
      "KAFKA_BROKERS naming no broker",
      "in-cluster",
      setConfig("KAFKA_BROKERS", "kafka-0.kafka:9092,kafka-3.kafka:9092"),
      "KAFKA_BROKERS names kafka-3.kafka:9092, which reaches no apache/kafka pod",
    ],
    [
      "KAFKA_BROKERS on the controller port",
      "in-cluster",
      setConfig("KAFKA_BROKERS", "kafka-0.kafka:9093"),
      "KAFKA_BROKERS kafka-0.kafka:9093 is not a client listener kafka-0 advertises",
    ],
    [
      "fewer brokers than replicas per topic",
      "in-cluster",
      (o) => Object.assign(spec("StatefulSet", "kafka")(o), { replicas: 2 }),
      "KAFKA_REPLICATION_FACTOR=3 exceeds the 2 Kafka pod(s)",
    ],
    [
      "a voter list without kafka-2",
      "in-cluster",
      setEnv("StatefulSet", "kafka", "KAFKA_CONTROLLER_QUORUM_VOTERS", "0@kafka-0.kafka:9093,1@kafka-1.kafka:9093"),
      "KAFKA_CONTROLLER_QUORUM_VOTERS lacks node 2 (kafka-2)",
    ],
    [
      "one node id for every broker",
      "in-cluster",
      setEnv("StatefulSet", "kafka", "KAFKA_NODE_ID", "1"),
      "kafka-1: KAFKA_NODE_ID 1 is also kafka-0's",
    ],
    [
      "an advertised listener naming one fixed broker",
      "in-cluster",
      setEnv("StatefulSet", "kafka", "KAFKA_ADVERTISED_LISTENERS", "INTERNAL://kafka-0.kafka:9092"),
      "kafka-1: advertised listener INTERNAL://kafka-0.kafka:9092 does not reach this pod",
    ],
    [
      "a store in the cluster although the stores are external",
      "external",
      (o) => o.push(structuredClone(find(rendered["in-cluster"], "StatefulSet", "redis"))),
      "external stores, but redis-0 run in the cluster",
    ],
    [
      "an external store naming a Service of the cluster",
      "external",
      setConfig("KAFKA_BROKERS", "gateway:8080"),
      "KAFKA_BROKERS names gateway:8080, inside the cluster",
    ],
  ];
  it.each(cases)("fail on %s", (_name, overlay, mutate, expected) => {
    const objects = structuredClone(rendered[overlay]);
    mutate(objects);
    const problems = [...objects.flatMap(schemaProblems), ...checkKubernetes(objects, options(overlay))];
    expect(problems.join("\n")).toContain(expected);
  });

  it("fail when DATABASE_URL names the Redis of the cluster", () => {
    const secrets = exampleSecret("in-cluster");
    (secrets["evb-secrets"] as Record<string, string>).DATABASE_URL = "postgres://evb:pw@redis:6379/evb";
    expect(checkKubernetes(rendered["in-cluster"], options("in-cluster", secrets)).join("\n")).toContain(
      "DATABASE_URL names redis:6379, which reaches no postgres pod",
    );
  });

  it("fail when an external DATABASE_URL points into the cluster", () => {
    const secrets = exampleSecret("external");
    (secrets["evb-secrets"] as Record<string, string>).DATABASE_URL = "postgres://evb:pw@indexer:9000/evb";
    expect(checkKubernetes(rendered.external, options("external", secrets)).join("\n")).toContain(
      "DATABASE_URL names indexer:9000, inside the cluster",
    );
  });

  it("fail on a pod reading a field the downward API does not give", () => {
    const objects = structuredClone(rendered.external);
    inContainer("StatefulSet", "indexer", (c) => {
      (c.env as EnvVar[]).push({ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } });
    })(objects);
    expect(checkKubernetes(objects, options("external")).join("\n")).toContain("reads field metadata.uid");
  });
});
