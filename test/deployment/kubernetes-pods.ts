import type { DockerImage } from "./compose-model.ts";
import { type Container, type K8sObject, podSpecOf } from "./kustomize-render.ts";

/** One pod as the cluster would run it from a workload: its name, IP, labels and containers. */
export interface Pod {
  workload: K8sObject;
  name: string;
  ip: string;
  labels: Record<string, string>;
  containers: Container[];
}

/** A container's environment as the process sees it, and which variables the manifest itself sets. */
export interface ResolvedEnv {
  env: Record<string, string>;
  /** Set by envFrom or env (not inherited from the image). */
  set: Set<string>;
  /** How each variable set by env got its value: `value`, `fieldRef:<path>`, `secretKeyRef`, … */
  source: Map<string, string>;
}

const WORKLOADS = new Set(["Deployment", "StatefulSet"]);

export const workloads = (objects: K8sObject[]) => objects.filter((o) => WORKLOADS.has(o.kind));

export function replicasOf(w: K8sObject): number {
  const r = (w.spec as { replicas?: number } | undefined)?.replicas;
  return r ?? 1;
}

/**
 * The pods a workload makes: a StatefulSet's are `<name>-<ordinal>` with the pod-index label, a
 * Deployment's `<name>-<template hash>-<random>` (a suffix without trailing digits, as most are).
 * Each pod gets its own IP, so the checks see what replicas of one manifest would each derive.
 */
export function podsOf(objects: K8sObject[]): Pod[] {
  return workloads(objects).flatMap((w, wi) => {
    const tpl = podSpecOf(w);
    if (!tpl) return [];
    return Array.from({ length: replicasOf(w) }, (_, i) => {
      const sts = w.kind === "StatefulSet";
      const name = sts ? `${w.metadata.name}-${i}` : `${w.metadata.name}-5d8c7b9f6-${"bcdfg"[i % 5]}x${"hjklm"[i % 5]}q`;
      const labels = {
        ...tpl.labels,
        ...(sts ? { "apps.kubernetes.io/pod-index": String(i), "statefulset.kubernetes.io/pod-name": name } : {}),
      };
      return { workload: w, name, ip: `10.42.${wi}.${i + 10}`, labels, containers: (tpl.spec.containers as Container[]) ?? [] };
    });
  });
}

/** The command a container runs: `command` replaces the image's ENTRYPOINT (and drops its CMD), `args` its CMD. */
export function commandOf(c: Container, image: DockerImage | undefined): string[] {
  const command = (c.command as string[] | undefined) ?? image?.entrypoint ?? [];
  const args = (c.args as string[] | undefined) ?? (c.command ? [] : (image?.cmd ?? []));
  return [...command, ...args];
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
  };
}
interface EnvFrom {
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
  prefix?: string;
}

/**
 * What the kubelet gives the container: the image's ENV, then envFrom, then env in order, with
 * `$(VAR)` expanded from the variables before it, field references from the pod, and keys of
 * ConfigMaps (from the render) and Secrets (from `secrets`, which are not rendered). A reference
 * to something missing is a problem: the pod would not start.
 */
export function resolveEnv(
  pod: Pod,
  c: Container,
  base: Record<string, string>,
  objects: K8sObject[],
  secrets: Record<string, Record<string, string>>,
  problems: string[],
): ResolvedEnv {
  const env = { ...base };
  const set = new Set<string>();
  const source = new Map<string, string>();
  const where = `${pod.workload.metadata.name}/${c.name}`;
  const configMap = (name: string) =>
    (objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name)?.data as Record<string, string> | undefined) ?? undefined;
  const lookup = (kind: "ConfigMap" | "Secret", name: string, optional = false) => {
    const data = kind === "ConfigMap" ? configMap(name) : secrets[name];
    if (!data && !optional) problems.push(`${where}: refers to ${kind} ${name}, which does not exist`);
    return data;
  };
  for (const from of (c.envFrom as EnvFrom[] | undefined) ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const data = lookup(from.configMapRef ? "ConfigMap" : "Secret", ref.name, ref.optional) ?? {};
    for (const [k, v] of Object.entries(data)) {
      env[`${from.prefix ?? ""}${k}`] = String(v);
      set.add(`${from.prefix ?? ""}${k}`);
    }
  }
  for (const v of (c.env as EnvVar[] | undefined) ?? []) {
    const value = envValue(pod, v, lookup, env, where, problems);
    set.add(v.name);
    source.set(
      v.name,
      v.valueFrom
        ? (Object.keys(v.valueFrom).map((k) => (k === "fieldRef" ? `fieldRef:${v.valueFrom?.fieldRef?.fieldPath}` : k))[0] ?? "")
        : "value",
    );
    if (value !== undefined) env[v.name] = value;
  }
  return { env, set, source };
}

function envValue(
  pod: Pod,
  v: EnvVar,
  lookup: (kind: "ConfigMap" | "Secret", name: string, optional?: boolean) => Record<string, string> | undefined,
  env: Record<string, string>,
  where: string,
  problems: string[],
): string | undefined {
  if (v.value !== undefined) return v.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => env[n] ?? m);
  const f = v.valueFrom;
  if (f?.fieldRef) {
    const path = f.fieldRef.fieldPath;
    const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
    const value = label ? pod.labels[label[1] as string] : fieldValue(pod, path);
    if (value === undefined) problems.push(`${where}: ${v.name} reads field ${path}, which this pod does not have`);
    return value;
  }
  const ref = f?.configMapKeyRef ?? f?.secretKeyRef;
  if (!ref) return undefined;
  const kind = f?.configMapKeyRef ? "ConfigMap" : "Secret";
  const data = lookup(kind, ref.name, ref.optional);
  if (data && data[ref.key] === undefined && !ref.optional)
    problems.push(`${where}: ${v.name} refers to key ${ref.key} of ${kind} ${ref.name}, which it lacks`);
  return data?.[ref.key];
}

function fieldValue(pod: Pod, path: string): string | undefined {
  const fields: Record<string, string | undefined> = {
    "metadata.name": pod.name,
    "metadata.namespace": pod.workload.metadata.namespace ?? "default",
    "status.podIP": pod.ip,
    "status.hostIP": "192.168.0.1",
    "spec.nodeName": "node-1",
    "spec.serviceAccountName": "default",
  };
  return fields[path];
}
