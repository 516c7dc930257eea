import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "@evb/config";
import {
  type ComposeDoc,
  type ComposeService,
  commandArgs,
  composeEnv,
  type DockerImage,
  dependencies,
  hasHealthcheck,
  healthcheckUrls,
  kafkaListeners,
  portMappings,
} from "./compose-model.ts";
import { checkLoadBalancer } from "./haproxy-check.ts";
import { checkKafka } from "./kafka-check.ts";
import { describeVariables, type EnvSchema, type ServiceKind } from "./service-schemas.ts";

export interface CheckOptions {
  schemas: Record<ServiceKind, EnvSchema>;
  /** The project image (its ENV is each container's base environment, its CMD the default service). */
  image: DockerImage;
  /** Repository root, to check that commands name files that exist. */
  root: string;
  /** The text of deploy/haproxy/haproxy.cfg, which the balancer service mounts. */
  haproxy: string;
}

/** A project service as it would run: its kind and its environment after the schema. */
export interface Instance {
  name: string;
  kind: ServiceKind;
  svc: ComposeService;
  /** What the container sees: image ENV, then the compose environment. */
  env: Record<string, string>;
  /** Each schema variable as the service reads it: set, or its default. */
  input: Record<string, string>;
  config: Record<string, unknown>;
  /** The variables its schema reads. */
  reads: ReadonlySet<string>;
}

export const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0"]);
/**
 * Must be equal on every instance that reads them: they locate the same topics, tables and keys,
 * and a callback the gateway accepted must not be refused by the notifier (or the reverse).
 */
export const AGREED = [
  "GROUP_IDS",
  "KAFKA_TOPIC_PREFIX",
  "REDIS_PREFIX",
  "DATABASE_SCHEMA",
  "KAFKA_PARTITIONS",
  "KAFKA_REPLICATION_FACTOR",
  "KAFKA_CONSUMER_GROUP",
  "CALLBACK_ALLOWED_CIDRS",
  "WEBHOOK_SECRETS",
];

/**
 * Checks docker-compose.yml against what the services accept and need. Returns every problem
 * found (empty when the deployment would start and agree with itself), each naming the
 * service and variable, so one run shows all that is wrong.
 */
export function checkCompose(doc: ComposeDoc, opts: CheckOptions): string[] {
  const problems: string[] = [];
  const services = doc.services ?? {};
  const hostnames = new Map<string, string>();
  for (const [name, svc] of Object.entries(services)) {
    hostnames.set(name, name);
    if (svc.hostname) hostnames.set(svc.hostname, name);
  }
  const kafka = Object.keys(services).filter((n) => services[n]?.image?.startsWith("apache/kafka"));
  const instances = projectInstances(services, opts, problems);

  for (const [name, svc] of Object.entries(services)) {
    if (!hasHealthcheck(svc)) problems.push(`${name}: has no healthcheck`);
    for (const dep of dependencies(svc).keys())
      if (!services[dep]) problems.push(`${name}: depends_on ${dep}, which is no service of this file`);
  }
  for (const kind of Object.keys(opts.schemas) as ServiceKind[]) {
    const n = instances.filter((i) => i.kind === kind).length;
    if (n < 2) problems.push(`${kind}: ${n} instance(s); the deployment runs at least 2 of each service`);
  }

  const usedHostPorts = new Map<number, string>();
  for (const inst of instances) {
    checkListening(inst, problems, usedHostPorts);
    checkAddresses(inst, services, hostnames, kafka, problems);
  }
  checkAgreement(instances, problems);
  checkKafka(services, kafka, instances, problems);
  checkImageTags(services, problems);
  checkCallbackNetwork(doc, instances, problems);
  const balancers = Object.keys(services).filter((n) => services[n]?.image?.startsWith("haproxy:"));
  if (balancers.length === 0) problems.push("no haproxy service in front of the gateways");
  const gateways = instances
    .filter((i) => i.kind === "gateway")
    .map((i) => ({ name: i.name, port: i.config.PORT as number, mqttPort: i.config.MQTT_PORT as number | undefined }));
  for (const n of balancers) checkLoadBalancer(n, services[n] as ComposeService, opts.haproxy, gateways, problems);
  return problems;
}

/**
 * Postgres numbers its releases major.minor with minor releases being bug fixes only (since 10),
 * so its major is the release line that others name by major.minor (`redis:7.4`).
 */
const LINE_IS_MAJOR = new Set(["postgres"]);

/** A tag that is `latest` or a bare major (`redis:7`) moves to another release line at the next pull. */
function checkImageTags(services: Record<string, ComposeService>, problems: string[]): void {
  for (const [name, svc] of Object.entries(services)) {
    if (svc.build !== undefined || !svc.image) continue;
    const [repo = "", tag = ""] = svc.image.split(/:(?=[^/:]+$)/);
    const line = tag.split("-")[0] ?? "";
    const unpinned = tag === "" || tag === "latest" || (/^\d+$/.test(line) && !LINE_IS_MAJOR.has(repo));
    if (unpinned) problems.push(`${name}: image ${svc.image} is not pinned to a release line (a bare major or latest); name major.minor`);
  }
}

/**
 * Callbacks to the receivers of this compose network, and only to them: CALLBACK_ALLOWED_CIDRS
 * is the default network's fixed subnet (the services would otherwise refuse every container).
 */
function checkCallbackNetwork(doc: ComposeDoc, instances: Instance[], problems: string[]): void {
  const subnets = (doc.networks?.default?.ipam?.config ?? []).map((c) => c.subnet).filter((s): s is string => !!s);
  if (subnets.length === 0) problems.push("networks.default has no fixed subnet, so no CALLBACK_ALLOWED_CIDRS can name it");
  for (const i of instances.filter((x) => x.reads.has("CALLBACK_ALLOWED_CIDRS"))) {
    const value = i.env.CALLBACK_ALLOWED_CIDRS ?? "";
    const allowed = value
      .split(",")
      .map((c) => c.trim())
      .filter(Boolean)
      .sort();
    if (JSON.stringify(allowed) !== JSON.stringify([...subnets].sort()))
      problems.push(`${i.name}: CALLBACK_ALLOWED_CIDRS="${value}" is not the compose network's subnet ${subnets.join(",") || "(none)"}`);
  }
}

function projectInstances(services: Record<string, ComposeService>, opts: CheckOptions, problems: string[]): Instance[] {
  const projectImages = new Set(
    Object.values(services)
      .filter((s) => s.build !== undefined && s.image)
      .map((s) => s.image as string),
  );
  const out: Instance[] = [];
  for (const [name, svc] of Object.entries(services)) {
    const built = svc.build !== undefined;
    if (!built && !(svc.image && projectImages.has(svc.image))) continue;
    const context = typeof svc.build === "string" ? svc.build : (svc.build?.context ?? ".");
    if (built && context.replace(/\/$/, "") !== ".") problems.push(`${name}: builds from "${context}", not the repository root`);
    const args = [...opts.image.entrypoint, ...(commandArgs(svc) ?? opts.image.cmd)];
    const main = args.find((a) => /^services\/[a-z-]+\/src\/main\.ts$/.test(a));
    const kind = main?.split("/")[1] as ServiceKind | undefined;
    if (!main || !kind || !(kind in opts.schemas)) {
      problems.push(`${name}: command ${JSON.stringify(args)} runs none of ${Object.keys(opts.schemas).join(", ")}`);
      continue;
    }
    if (!existsSync(join(opts.root, main))) problems.push(`${name}: ${main} does not exist`);
    const env = { ...opts.image.env, ...composeEnv(svc) };
    const schema = opts.schemas[kind];
    const input: Record<string, string> = {};
    for (const v of describeVariables(schema)) {
      if (v.required && !env[v.name]) problems.push(`${name}: ${v.name} is required by the ${kind} and not set`);
      const value = env[v.name] || v.default;
      if (value !== undefined) input[v.name] = value;
    }
    try {
      // A renamed variable still works, but the file should use the new name.
      const config = parseEnv(name, schema, env, (m) => problems.push(m)) as Record<string, unknown>;
      out.push({ name, kind, svc, env, input, config, reads: new Set(Object.keys(schema.shape)) });
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return out;
}

/** The variable holding the port a service answers on: the gateway's API port, the others' health port. */
function listenVar(kind: ServiceKind): "PORT" | "HEALTH_PORT" {
  return kind === "gateway" ? "PORT" : "HEALTH_PORT";
}

/** The port the service answers on, its healthcheck and its published ports must be one and the same. */
function checkListening(inst: Instance, problems: string[], usedHostPorts: Map<number, string>): void {
  const { name, kind, config } = inst;
  const portVar = listenVar(kind);
  const port = config[portVar];
  if (port === 0 || typeof port !== "number") {
    problems.push(`${name}: ${portVar} must be a fixed port in a container (got ${String(port)}), or nothing can check it`);
    return;
  }
  if (!["0.0.0.0", "::"].includes(String(config.HOST))) {
    problems.push(`${name}: HOST=${String(config.HOST)} is unreachable from other containers and published ports; use 0.0.0.0`);
  }
  const urls = healthcheckUrls(inst.svc);
  if (urls.length === 0) problems.push(`${name}: healthcheck requests no /readyz URL`);
  for (const u of urls) {
    // Readiness: `docker compose ps` and `up --wait` then say whether the service can work.
    if (!LOOPBACK.has(u.hostname) || Number(u.port) !== port || u.pathname !== "/readyz") {
      problems.push(`${name}: healthcheck requests ${u.href}, but the ${kind} answers on http://127.0.0.1:${port}/readyz (${portVar})`);
    }
  }
  const mappings = portMappings(inst.svc);
  const listening = new Map<number, string>([[port, portVar]]);
  if (kind === "gateway") {
    // Users expect MQTT over TCP next to HTTP, on its own published port.
    const mqtt = config.MQTT_PORT;
    if (typeof mqtt !== "number" || mqtt === 0)
      problems.push(`${name}: MQTT_PORT must be a fixed port (got ${String(mqtt)}), or MQTT over TCP is off`);
    else listening.set(mqtt, "MQTT_PORT");
    for (const [p, v] of listening)
      if (!mappings.some((m) => m.container === p)) problems.push(`${name}: no published port maps to ${v} ${p}`);
  }
  for (const m of mappings) {
    if (!listening.has(m.container))
      problems.push(
        `${name}: publishes container port ${m.container}, but the ${kind} listens on ${[...listening].map(([p, v]) => `${p} (${v})`).join(" and ")}`,
      );
    if (m.host === undefined) continue;
    const other = usedHostPorts.get(m.host);
    if (other) problems.push(`${name}: host port ${m.host} is already published by ${other}`);
    usedHostPorts.set(m.host, name);
  }
}

/** Every address a service dials must be a compose service it waits for, never the container itself. */
function checkAddresses(
  inst: Instance,
  services: Record<string, ComposeService>,
  hostnames: Map<string, string>,
  kafka: string[],
  problems: string[],
): void {
  const { name, input, config } = inst;
  const deps = dependencies(inst.svc);
  const needs = (variable: string, host: string, want: (s: string) => boolean, what: string) => {
    const target = hostnames.get(host);
    if (!target || !want(target)) {
      problems.push(`${name}: ${variable} names host "${host}", which is not a ${what} service of this file`);
      return;
    }
    if (deps.get(target) !== "service_healthy")
      problems.push(`${name}: ${variable} uses ${target}, so depends_on ${target} needs condition: service_healthy`);
  };
  const image = (n: string) => services[n]?.image ?? "";
  const db = new URL(String(config.DATABASE_URL));
  needs("DATABASE_URL", db.hostname, (s) => image(s).startsWith("postgres"), "postgres");
  const redis = new URL(String(config.REDIS_URL));
  needs("REDIS_URL", redis.hostname, (s) => image(s).startsWith("redis"), "redis");
  for (const hp of config.KAFKA_BROKERS as string[]) {
    const [host = "", port = ""] = hp.split(":");
    needs("KAFKA_BROKERS", host, (s) => kafka.includes(s), "Kafka");
    const target = hostnames.get(host);
    if (!target || !kafka.includes(target)) continue;
    const kenv = composeEnv(services[target] as ComposeService);
    const controller = kenv.KAFKA_CONTROLLER_LISTENER_NAMES?.split(",") ?? [];
    const advertised = [...kafkaListeners(kenv.KAFKA_ADVERTISED_LISTENERS)].find(([, a]) => a.port === Number(port));
    const listener = advertised ? kafkaListeners(kenv.KAFKA_LISTENERS).get(advertised[0]) : undefined;
    if (
      !advertised ||
      controller.includes(advertised[0]) ||
      hostnames.get(advertised[1].host) !== target ||
      listener?.port !== Number(port)
    ) {
      problems.push(
        `${name}: KAFKA_BROKERS ${hp} is not a client listener of ${target} (in KAFKA_LISTENERS on that port and advertised as ${target}:${port})`,
      );
    }
  }
  // Variables added later (callback URLs, …) that point at loopback, even by default, would dial this very container.
  for (const [variable, value] of Object.entries(input)) {
    if (!value.includes("://")) continue;
    try {
      const u = new URL(value);
      if (LOOPBACK.has(u.hostname)) problems.push(`${name}: ${variable}=${value} points at the container itself`);
    } catch {
      // not a URL: nothing to check here
    }
  }
  // Where another node or an admin listing says this instance is; loopback or the bind-all address would mislead them.
  if (inst.reads.has("INSTANCE_ADDRESS")) {
    const portVar = listenVar(inst.kind);
    const addr = config.INSTANCE_ADDRESS;
    if (typeof addr !== "string") {
      problems.push(`${name}: INSTANCE_ADDRESS is unset, so other nodes would see ${String(config.HOST)}:${String(config[portVar])}`);
    } else {
      const [host = "", port = ""] = addr.split(":");
      if (hostnames.get(host) !== name || Number(port) !== config[portVar]) {
        problems.push(`${name}: INSTANCE_ADDRESS=${addr} does not reach this ${inst.kind} (want ${name}:${String(config[portVar])})`);
      }
    }
  }
}

function checkAgreement(instances: Instance[], problems: string[]): void {
  const distinct = (kind: ServiceKind, variable: string) => {
    const seen = new Map<string, string>();
    for (const i of instances.filter((x) => x.kind === kind)) {
      const v = JSON.stringify(i.config[variable]);
      const other = seen.get(v);
      if (other) problems.push(`${i.name}: ${variable}=${v} is also ${other}'s; each ${kind} needs its own`);
      seen.set(v, i.name);
    }
  };
  distinct("indexer", "SEALER_INDEX");
  for (const kind of new Set(instances.filter((i) => i.reads.has("INSTANCE_ADDRESS")).map((i) => i.kind)))
    distinct(kind, "INSTANCE_ADDRESS");
  const first = instances[0];
  if (!first) return;
  const where = (i: Instance) => {
    const db = new URL(String(i.config.DATABASE_URL));
    const r = new URL(String(i.config.REDIS_URL));
    return { DATABASE: `${db.host}${db.pathname}`, REDIS: `${r.host}${r.pathname}` };
  };
  for (const v of AGREED) {
    const readers = instances.filter((i) => i.reads.has(v));
    const ref = readers[0];
    for (const i of readers.slice(1)) {
      if (ref && JSON.stringify(i.config[v]) !== JSON.stringify(ref.config[v])) {
        problems.push(`${i.name}: ${v}=${JSON.stringify(i.config[v])} differs from ${ref.name}'s ${JSON.stringify(ref.config[v])}`);
      }
    }
  }
  for (const i of instances.slice(1)) {
    const [a, b] = [where(i), where(first)];
    if (a.DATABASE !== b.DATABASE) problems.push(`${i.name}: DATABASE_URL is database ${a.DATABASE}, ${first.name} uses ${b.DATABASE}`);
    if (a.REDIS !== b.REDIS) problems.push(`${i.name}: REDIS_URL is ${a.REDIS}, ${first.name} uses ${b.REDIS}`);
  }
}
