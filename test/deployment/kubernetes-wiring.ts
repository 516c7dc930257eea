import { kafkaListeners, kafkaVoters } from "./compose-model.ts";
import { type Pod, replicasOf, type ResolvedEnv, workloads } from "./kubernetes-pods.ts";
import { type Container, type K8sObject, podSpecOf } from "./kustomize-render.ts";

interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
}
interface ServiceSpec {
  selector?: Record<string, string>;
  clusterIP?: string;
  ports?: ServicePort[];
}
interface ContainerPort {
  name?: string;
  containerPort: number;
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** A container's port by number or name, as probes and Services name it; undefined when it has none such. */
export function containerPort(c: Container, port: number | string | undefined): number | undefined {
  const ports = (c.ports as ContainerPort[] | undefined) ?? [];
  if (typeof port === "number") return ports.some((p) => p.containerPort === port) ? port : undefined;
  return ports.find((p) => p.name === port)?.containerPort;
}

/** Selectors match their templates, Services reach ports that exist, StatefulSets have their governing Service. */
export function checkSelectors(objects: K8sObject[], pods: Pod[], problems: string[]): void {
  for (const w of workloads(objects)) {
    const selector = (w.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels;
    if (!matches(selector, podSpecOf(w)?.labels ?? {}))
      problems.push(`${w.kind}/${w.metadata.name}: selector ${JSON.stringify(selector)} does not match its pod template's labels`);
    if (w.kind === "StatefulSet") {
      const name = (w.spec as { serviceName?: string }).serviceName;
      const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === name);
      const spec = svc?.spec as ServiceSpec | undefined;
      if (!svc || spec?.clusterIP !== "None" || !matches(spec.selector, podSpecOf(w)?.labels ?? {}))
        problems.push(`StatefulSet/${w.metadata.name}: serviceName ${name} is not a headless Service (clusterIP: None) selecting its pods`);
    }
  }
  for (const svc of objects.filter((o) => o.kind === "Service")) {
    const spec = svc.spec as ServiceSpec;
    const selected = pods.filter((p) => matches(spec.selector, p.labels));
    if (selected.length === 0) {
      problems.push(`Service/${svc.metadata.name}: selector ${JSON.stringify(spec.selector)} matches no pod`);
      continue;
    }
    for (const port of spec.ports ?? []) {
      const target = port.targetPort ?? port.port;
      for (const pod of selected)
        if (!pod.containers.some((c) => containerPort(c, target) !== undefined))
          problems.push(
            `Service/${svc.metadata.name}: port ${port.name ?? port.port} targets ${target}, which ${pod.name} does not expose`,
          );
    }
  }
}

/** Each PodDisruptionBudget covers one workload and lets a drain go on; each workload of 2+ replicas has one. */
export function checkBudgets(objects: K8sObject[], problems: string[]): void {
  const pdbs = objects.filter((o) => o.kind === "PodDisruptionBudget");
  for (const w of workloads(objects)) {
    const labels = podSpecOf(w)?.labels ?? {};
    const mine = pdbs.filter((p) =>
      matches((p.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels, labels),
    );
    const replicas = replicasOf(w);
    if (mine.length === 0 && replicas >= 2)
      problems.push(`${w.kind}/${w.metadata.name}: no PodDisruptionBudget, so a drain may stop all ${replicas} at once`);
    if (mine.length > 1)
      problems.push(`${w.kind}/${w.metadata.name}: ${mine.length} PodDisruptionBudgets select it (the API refuses evictions then)`);
    for (const p of mine) {
      const spec = p.spec as { maxUnavailable?: number | string; minAvailable?: number | string };
      const blocks =
        spec.maxUnavailable !== undefined
          ? spec.maxUnavailable === 0 || spec.maxUnavailable === "0%"
          : Number(spec.minAvailable) >= replicas;
      if (blocks)
        problems.push(
          `PodDisruptionBudget/${p.metadata.name}: allows no disruption of ${w.metadata.name} (${replicas} replicas), so every node drain would hang`,
        );
    }
  }
  for (const p of pdbs) {
    const selector = (p.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels;
    if (!workloads(objects).some((w) => matches(selector, podSpecOf(w)?.labels ?? {})))
      problems.push(`PodDisruptionBudget/${p.metadata.name}: selector ${JSON.stringify(selector)} matches no workload`);
  }
}

/**
 * The pods a host:port reaches inside the cluster, as cluster DNS resolves it: a Service
 * (`svc`, `svc.ns`, `svc.ns.svc[.cluster.local]`) on one of its ports, or a StatefulSet pod
 * through its headless Service (`pod.svc[.ns…]`) on a container port. Empty: not in the cluster.
 */
export function reach(host: string, port: number, objects: K8sObject[], pods: Pod[]): { pods: Pod[]; problem?: string } {
  const parts = host.replace(/\.svc(\.cluster\.local)?$/, "").split(".");
  const ns = objects.find((o) => o.metadata.namespace)?.metadata.namespace ?? "default";
  const service = (name: string | undefined) => objects.find((o) => o.kind === "Service" && o.metadata.name === name);
  let svcName: string | undefined;
  let podName: string | undefined;
  if (parts.length === 1 || (parts.length === 2 && parts[1] === ns)) svcName = parts[0];
  else if (parts.length === 2 || (parts.length === 3 && parts[2] === ns)) [podName, svcName] = parts;
  const svc = service(svcName);
  if (!svc) return { pods: [] };
  const spec = svc.spec as ServiceSpec;
  let selected = pods.filter((p) => matches(spec.selector, p.labels));
  if (podName) {
    selected = selected.filter((p) => p.name === podName && (p.workload.spec as { serviceName?: string }).serviceName === svcName);
    if (selected.length === 0 || spec.clusterIP !== "None")
      return { pods: [], problem: `${host} names no pod of the headless Service ${svcName}` };
  }
  if (spec.clusterIP === "None") {
    const open = selected.filter((p) => p.containers.some((c) => containerPort(c, port) !== undefined));
    return open.length === selected.length
      ? { pods: selected }
      : { pods: [], problem: `${host}:${port} is no container port of ${svcName}'s pods` };
  }
  const sp = spec.ports?.find((p) => p.port === port);
  if (!sp) return { pods: [], problem: `Service ${svcName} has no port ${port}` };
  return { pods: selected };
}

export interface KafkaNode {
  pod: Pod;
  env: ResolvedEnv;
}

/**
 * One KRaft quorum of the Kafka pods: node ids distinct and the voter list naming exactly its
 * pods by their DNS names and controller ports, one cluster id, each advertised client listener
 * reaching the pod itself, and each of the services' `brokers` (host:port) such a listener.
 */
export function checkKafkaNodes(nodes: KafkaNode[], brokers: string[], objects: K8sObject[], pods: Pod[], problems: string[]): void {
  const byId = new Map<number, Pod>();
  const same = (v: string) => {
    if (new Set(nodes.map((n) => n.env.env[v])).size > 1) problems.push(`kafka: ${v} differs between the Kafka pods`);
  };
  same("CLUSTER_ID");
  same("KAFKA_CONTROLLER_QUORUM_VOTERS");
  for (const { pod, env } of nodes) {
    const e = env.env;
    const id = Number(e.KAFKA_NODE_ID);
    if (!Number.isInteger(id)) problems.push(`${pod.name}: KAFKA_NODE_ID is ${e.KAFKA_NODE_ID}, not a number`);
    else if (byId.has(id)) problems.push(`${pod.name}: KAFKA_NODE_ID ${id} is also ${byId.get(id)?.name}'s`);
    byId.set(id, pod);
    if (!/^[A-Za-z0-9_-]{22}$/.test(e.CLUSTER_ID ?? ""))
      problems.push(`${pod.name}: CLUSTER_ID "${e.CLUSTER_ID}" is not a 22-character base64url id`);
    if (!e.KAFKA_PROCESS_ROLES?.split(",").includes("controller")) problems.push(`${pod.name}: KAFKA_PROCESS_ROLES lacks controller`);
    const controller = e.KAFKA_CONTROLLER_LISTENER_NAMES?.split(",") ?? [];
    const listeners = kafkaListeners(e.KAFKA_LISTENERS);
    for (const [name, a] of kafkaListeners(e.KAFKA_ADVERTISED_LISTENERS)) {
      const target = reach(a.host, a.port, objects, pods).pods;
      if (controller.includes(name) || listeners.get(name)?.port !== a.port || target.length !== 1 || target[0] !== pod)
        problems.push(`${pod.name}: advertised listener ${name}://${a.host}:${a.port} does not reach this pod's ${name} listener`);
    }
  }
  const first = nodes[0]?.env.env ?? {};
  const voters = kafkaVoters(first.KAFKA_CONTROLLER_QUORUM_VOTERS);
  const controllerName = first.KAFKA_CONTROLLER_LISTENER_NAMES?.split(",")[0] ?? "";
  for (const v of voters) {
    const target = reach(v.host, v.port, objects, pods).pods;
    const pod = byId.get(v.id);
    const port = pod ? kafkaListeners(nodes.find((n) => n.pod === pod)?.env.env.KAFKA_LISTENERS).get(controllerName)?.port : undefined;
    if (!pod || target.length !== 1 || target[0] !== pod || port !== v.port)
      problems.push(
        `kafka: KAFKA_CONTROLLER_QUORUM_VOTERS names ${v.id}@${v.host}:${v.port}, which is not node ${v.id}'s controller listener`,
      );
  }
  for (const [id, pod] of byId)
    if (!voters.some((v) => v.id === id)) problems.push(`kafka: KAFKA_CONTROLLER_QUORUM_VOTERS lacks node ${id} (${pod.name})`);
  for (const hp of brokers) {
    const [host = "", port = ""] = hp.split(":");
    for (const pod of reach(host, Number(port), objects, pods).pods) {
      const e = nodes.find((n) => n.pod === pod)?.env.env ?? {};
      const controller = e.KAFKA_CONTROLLER_LISTENER_NAMES?.split(",") ?? [];
      const client = [...kafkaListeners(e.KAFKA_ADVERTISED_LISTENERS)].some(
        ([name, a]) => a.port === Number(port) && !controller.includes(name),
      );
      if (!client) problems.push(`KAFKA_BROKERS ${hp} is not a client listener ${pod.name} advertises`);
    }
  }
}
