import { AGREED, LOOPBACK } from "./compose-check.ts";
import type { DockerImage } from "./compose-model.ts";
import { type Container, type K8sObject, podSpecOf } from "./kustomize-render.ts";
import { commandOf, type Pod, podsOf, type ResolvedEnv, resolveEnv } from "./kubernetes-pods.ts";
import { checkBudgets, checkKafkaNodes, checkSelectors, containerPort, type KafkaNode, reach } from "./kubernetes-wiring.ts";
import type { EnvSchema, ServiceKind } from "./service-schemas.ts";

export interface KubeCheckOptions {
  /** The project image (its ENV is each container's base environment, its ENTRYPOINT and CMD the defaults). */
  image: DockerImage;
  /** Its name without registry or tag (the last part of the image's path). */
  imageName: string;
  schemas: Record<ServiceKind, EnvSchema>;
  /** Each service's own loader (loadGatewayConfig, …): the derivation and cross-checks included. */
  loaders: Record<ServiceKind, (env: NodeJS.ProcessEnv) => unknown>;
  /** The Secrets the manifests expect to exist (not rendered: see the overlays' secret.example.yaml). */
  secrets: Record<string, Record<string, string>>;
  /** in-cluster: the stores are workloads of the render; external: none are, and nothing points into the cluster for them. */
  stores: "in-cluster" | "external";
}

/** A project container in one pod, with its environment and the configuration its service would load. */
interface Instance {
  name: string;
  pod: Pod;
  container: Container;
  kind: ServiceKind;
  env: ResolvedEnv;
  config: Record<string, unknown>;
  /** The variables its schema reads. */
  reads: ReadonlySet<string>;
}

const STORE_IMAGES = { DATABASE_URL: "postgres", REDIS_URL: "redis", KAFKA_BROKERS: "apache/kafka" } as const;
const imageName = (image: string) => image.replace(/@.*$/, "").replace(/:[^:/]+$/, "");
const listenVar = (kind: ServiceKind) => (kind === "gateway" ? "PORT" : "HEALTH_PORT");

/**
 * Checks a rendered overlay as the cluster would run it: every pod of every workload, each
 * project container's environment through its service's own loader, and the references between
 * objects. Returns every problem found, each naming the object and what is wrong.
 */
export function checkKubernetes(objects: K8sObject[], opts: KubeCheckOptions): string[] {
  const problems: string[] = [];
  const pods = podsOf(objects);
  checkNamespace(objects, problems);
  checkSelectors(objects, pods, problems);
  checkBudgets(objects, problems);
  for (const w of objects) for (const c of (podSpecOf(w)?.spec.containers as Container[] | undefined) ?? []) checkContainer(w, c, problems);
  const instances = projectInstances(objects, pods, opts, problems);
  for (const kind of Object.keys(opts.schemas) as ServiceKind[]) {
    const n = instances.filter((i) => i.kind === kind).length;
    if (n < 2) problems.push(`${kind}: ${n} pod(s); the deployment runs at least 2 of each service`);
  }
  for (const inst of instances) {
    checkPorts(inst, problems);
    checkStores(inst, objects, pods, opts, problems);
  }
  checkIdentity(instances, objects, pods, problems);
  checkAgreement(instances, problems);
  const stores = pods.filter((p) => p.containers.some((c) => Object.values(STORE_IMAGES).includes(imageName(c.image) as never)));
  if (opts.stores === "external" && stores.length > 0)
    problems.push(`external stores, but ${stores.map((p) => p.name).join(", ")} run in the cluster`);
  if (opts.stores === "in-cluster") checkKafka(instances, objects, pods, opts, problems);
  return problems;
}

/** The in-cluster Kafka: one KRaft quorum of its pods, and enough brokers for the services' replication. */
function checkKafka(instances: Instance[], objects: K8sObject[], pods: Pod[], opts: KubeCheckOptions, problems: string[]): void {
  const nodes: KafkaNode[] = pods.flatMap((pod) =>
    pod.containers
      .filter((c) => imageName(c.image) === STORE_IMAGES.KAFKA_BROKERS)
      .map((c) => ({ pod, env: resolveEnv(pod, c, {}, objects, opts.secrets, problems) })),
  );
  if (nodes.length === 0) problems.push("in-cluster stores, but no apache/kafka pod");
  checkKafkaNodes(nodes, (instances[0]?.config.KAFKA_BROKERS as string[] | undefined) ?? [], objects, pods, problems);
  const minIsr = Number(nodes[0]?.env.env.KAFKA_MIN_INSYNC_REPLICAS ?? 1);
  const first = instances[0];
  if (!first) return;
  const rf = Number(first.config.KAFKA_REPLICATION_FACTOR);
  if (rf > nodes.length)
    problems.push(`${first.name}: KAFKA_REPLICATION_FACTOR=${rf} exceeds the ${nodes.length} Kafka pod(s); topic creation would fail`);
  if (nodes.length > 1 && minIsr >= rf)
    problems.push(
      `${first.name}: KAFKA_REPLICATION_FACTOR=${rf} with min.insync.replicas ${minIsr} refuses every publish while one broker is away`,
    );
}

function checkNamespace(objects: K8sObject[], problems: string[]): void {
  const namespaces = new Set(objects.filter((o) => o.kind !== "Namespace").map((o) => o.metadata.namespace));
  if (namespaces.size > 1) problems.push(`objects in several namespaces: ${[...namespaces].join(", ")}`);
  for (const n of objects.filter((o) => o.kind === "Namespace"))
    if (!namespaces.has(n.metadata.name)) problems.push(`Namespace/${n.metadata.name}: the objects are in ${[...namespaces].join(", ")}`);
}

interface Probe {
  httpGet?: { path?: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
}

/** Every container: probes that reach its own ports, requests and a memory limit, a pinned image. */
function checkContainer(w: K8sObject, c: Container, problems: string[]): void {
  const where = `${w.kind}/${w.metadata.name}/${c.name}`;
  for (const kind of ["readinessProbe", "livenessProbe"] as const) if (!c[kind]) problems.push(`${where}: has no ${kind}`);
  for (const kind of ["readinessProbe", "livenessProbe", "startupProbe"] as const) {
    const p = c[kind] as Probe | undefined;
    const port = p?.httpGet?.port ?? p?.tcpSocket?.port;
    if (port !== undefined && containerPort(c, port) === undefined)
      problems.push(`${where}: ${kind} asks port ${port}, which the container does not expose`);
  }
  const r = c.resources as { requests?: Record<string, string>; limits?: Record<string, string> } | undefined;
  for (const need of ["requests.cpu", "requests.memory", "limits.memory"]) {
    const [group, key] = need.split(".") as ["requests" | "limits", string];
    if (!r?.[group]?.[key]) problems.push(`${where}: no resources.${need}`);
  }
  if (r?.requests?.memory && r.limits?.memory && bytes(r.limits.memory) < bytes(r.requests.memory))
    problems.push(`${where}: memory limit ${r.limits.memory} is below its request ${r.requests.memory}`);
  if (!/:[^:/]+$|@/.test(c.image) || c.image.endsWith(":latest")) problems.push(`${where}: image ${c.image} has no fixed tag`);
}

function bytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m?.[2] ?? ""] ?? 1;
  return m ? Number(m[1]) * unit : Number.NaN;
}

function projectInstances(objects: K8sObject[], pods: Pod[], opts: KubeCheckOptions, problems: string[]): Instance[] {
  const out: Instance[] = [];
  for (const pod of pods) {
    for (const c of pod.containers) {
      // The project's image wherever it is pushed: registry.example.com/event-broker:1.0 too.
      if (imageName(c.image).split("/").at(-1) !== opts.imageName) continue;
      const name = `${pod.name}/${c.name}`;
      const args = commandOf(c, opts.image);
      const kind = args.find((a) => /^services\/[a-z-]+\/src\/main\.ts$/.test(a))?.split("/")[1] as ServiceKind | undefined;
      if (!kind || !(kind in opts.schemas)) {
        problems.push(`${name}: command ${JSON.stringify(args)} runs none of ${Object.keys(opts.schemas).join(", ")}`);
        continue;
      }
      const env = resolveEnv(pod, c, opts.image.env, objects, opts.secrets, problems);
      const reads = new Set(Object.keys(opts.schemas[kind].shape));
      for (const v of env.set) if (!reads.has(v)) problems.push(`${name}: sets ${v}, which the ${kind} does not read`);
      try {
        const config = opts.loaders[kind]({ ...env.env }) as Record<string, unknown>;
        out.push({ name, pod, container: c, kind, env, config, reads });
      } catch (err) {
        problems.push(`${name}: ${(err as Error).message}`);
      }
    }
  }
  return out;
}

/** The port the service answers on is a container port its probes ask, and every container port is one it listens on. */
function checkPorts(inst: Instance, problems: string[]): void {
  const { name, kind, config, container: c } = inst;
  const portVar = listenVar(kind);
  const port = config[portVar];
  if (typeof port !== "number" || port === 0) problems.push(`${name}: ${portVar} must be a fixed port in a pod (got ${String(port)})`);
  if (!["0.0.0.0", "::"].includes(String(config.HOST)))
    problems.push(`${name}: HOST=${String(config.HOST)} is unreachable from other pods and probes; use 0.0.0.0`);
  const listening = new Set([port, config.MQTT_PORT].filter((p) => typeof p === "number" && p > 0));
  for (const p of (c.ports as Array<{ containerPort: number }> | undefined) ?? [])
    if (!listening.has(p.containerPort))
      problems.push(`${name}: exposes container port ${p.containerPort}, which the ${kind} does not listen on`);
  for (const p of listening)
    if (containerPort(c, p as number) === undefined) problems.push(`${name}: listens on ${String(p)}, which is no container port`);
  const want = { readinessProbe: "/readyz", livenessProbe: "/livez", startupProbe: "/livez" } as const;
  for (const [probe, path] of Object.entries(want)) {
    const get = (c[probe] as Probe | undefined)?.httpGet;
    if (!get) {
      if (probe !== "startupProbe") problems.push(`${name}: ${probe} is not an HTTP GET of ${path}`);
      continue;
    }
    if (containerPort(c, get.port) !== port || get.path !== path)
      problems.push(`${name}: ${probe} asks ${get.path} on ${get.port}, but the ${kind} answers ${path} on ${String(port)} (${portVar})`);
  }
}

/** DATABASE_URL, REDIS_URL and KAFKA_BROKERS reach the right store: a pod of the render (in-cluster) or nothing of it (external). */
function checkStores(inst: Instance, objects: K8sObject[], pods: Pod[], opts: KubeCheckOptions, problems: string[]): void {
  const { name, config } = inst;
  const db = new URL(String(config.DATABASE_URL));
  const redis = new URL(String(config.REDIS_URL));
  const targets: Array<[keyof typeof STORE_IMAGES, string, number]> = [
    ["DATABASE_URL", db.hostname, Number(db.port || 5432)],
    ["REDIS_URL", redis.hostname, Number(redis.port || 6379)],
    ...(config.KAFKA_BROKERS as string[]).map((hp): ["KAFKA_BROKERS", string, number] => [
      "KAFKA_BROKERS",
      hp.split(":")[0] ?? "",
      Number(hp.split(":")[1]),
    ]),
  ];
  for (const [variable, host, port] of targets) {
    if (LOOPBACK.has(host)) {
      problems.push(`${name}: ${variable} names ${host}, the pod itself`);
      continue;
    }
    const { pods: reached, problem } = reach(host, port, objects, pods);
    const image = STORE_IMAGES[variable];
    if (opts.stores === "external") {
      if (reached.length > 0 || problem)
        problems.push(`${name}: ${variable} names ${host}:${port}, inside the cluster, but the stores are external`);
    } else if (problem || reached.length === 0 || !reached.every((p) => p.containers.some((c) => imageName(c.image) === image))) {
      problems.push(
        `${name}: ${variable} names ${host}:${port}, which reaches no ${image} pod of this overlay${problem ? ` (${problem})` : ""}`,
      );
    }
  }
  for (const [variable, value] of Object.entries(inst.env.env)) {
    if (!value.includes("://")) continue;
    try {
      if (LOOPBACK.has(new URL(value).hostname)) problems.push(`${name}: ${variable}=${value} points at the pod itself`);
    } catch {
      // not a URL
    }
  }
}

/**
 * Replicas of one manifest must still differ where the services need it: no SEALER_INDEX or
 * INSTANCE_ADDRESS set by hand (a value all replicas would share), the pod's name and IP from the
 * downward API, and what each pod derives distinct and reaching that pod.
 */
function checkIdentity(instances: Instance[], objects: K8sObject[], pods: Pod[], problems: string[]): void {
  const seen = new Map<string, string>();
  const distinct = (i: Instance, variable: string) => {
    const key = `${i.kind}:${variable}:${JSON.stringify(i.config[variable])}`;
    const other = seen.get(key);
    if (other)
      problems.push(`${i.name}: ${variable}=${JSON.stringify(i.config[variable])} is also ${other}'s; each ${i.kind} needs its own`);
    seen.set(key, i.name);
  };
  const from = { POD_NAME: "fieldRef:metadata.name", POD_IP: "fieldRef:status.podIP" } as const;
  for (const i of instances) {
    for (const v of ["SEALER_INDEX", "INSTANCE_ADDRESS"] as const) {
      if (!i.env.set.has(v)) continue;
      problems.push(
        `${i.name}: sets ${v} by hand, which every replica of ${i.pod.workload.metadata.name} would share; leave it to the pod's ${v === "SEALER_INDEX" ? "ordinal (POD_NAME)" : "IP (POD_IP)"}`,
      );
    }
    for (const v of ["POD_NAME", "POD_IP"] as const)
      if (i.reads.has(v) && i.env.source.get(v) !== from[v])
        problems.push(`${i.name}: ${v} must come from the downward API (${from[v].replace(":", " ")})`);
    if (i.kind === "indexer") distinct(i, "SEALER_INDEX");
    if (!i.reads.has("INSTANCE_ADDRESS")) continue;
    distinct(i, "INSTANCE_ADDRESS");
    const [host = "", port = ""] = String(i.config.INSTANCE_ADDRESS ?? "").split(":");
    const reached = reach(host, Number(port), objects, pods).pods;
    const own = host === i.pod.ip || (reached.length > 0 && reached.every((p) => p === i.pod));
    if (!i.config.INSTANCE_ADDRESS || !own || Number(port) !== i.config[listenVar(i.kind)])
      problems.push(
        `${i.name}: INSTANCE_ADDRESS=${String(i.config.INSTANCE_ADDRESS)} does not reach this pod (${i.pod.ip}:${String(i.config[listenVar(i.kind)])})`,
      );
  }
}

function checkAgreement(instances: Instance[], problems: string[]): void {
  const where = (i: Instance) => {
    const db = new URL(String(i.config.DATABASE_URL));
    const r = new URL(String(i.config.REDIS_URL));
    return `${db.host}${db.pathname} ${r.host}${r.pathname}`;
  };
  const first = instances[0];
  for (const v of AGREED) {
    const readers = instances.filter((i) => i.reads.has(v));
    for (const i of readers.slice(1))
      if (JSON.stringify(i.config[v]) !== JSON.stringify(readers[0]?.config[v]))
        problems.push(`${i.name}: ${v}=${JSON.stringify(i.config[v])} differs from ${readers[0]?.name}'s`);
  }
  for (const i of instances.slice(1))
    if (first && where(i) !== where(first)) problems.push(`${i.name}: uses ${where(i)}, ${first.name} ${where(first)}`);
}
