import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Namespace, Secret, Service } from "kubernetes-models/v1";
import { validate as deploymentSchema } from "kubernetes-models/_schemas/IoK8sApiAppsV1Deployment";
import { validate as statefulSetSchema } from "kubernetes-models/_schemas/IoK8sApiAppsV1StatefulSet";
import { validate as jobSchema } from "kubernetes-models/_schemas/IoK8sApiBatchV1Job";
import { validate as configMapSchema } from "kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap";
import { validate as namespaceSchema } from "kubernetes-models/_schemas/IoK8sApiCoreV1Namespace";
import { validate as secretSchema } from "kubernetes-models/_schemas/IoK8sApiCoreV1Secret";
import { validate as serviceSchema } from "kubernetes-models/_schemas/IoK8sApiCoreV1Service";
import { validate as pdbSchema } from "kubernetes-models/_schemas/IoK8sApiPolicyV1PodDisruptionBudget";
import type { K8sObject } from "./kustomize-render.ts";

type ModelClass = new (data: never) => { validate(): void };

/** The kinds the manifests may use: the model class that validates one and its bare schema function. */
const KINDS: Record<string, [ModelClass, (data: unknown) => boolean]> = {
  "apps/v1/Deployment": [Deployment, deploymentSchema],
  "apps/v1/StatefulSet": [StatefulSet, statefulSetSchema],
  "batch/v1/Job": [Job, jobSchema],
  "policy/v1/PodDisruptionBudget": [PodDisruptionBudget, pdbSchema],
  "v1/ConfigMap": [ConfigMap, configMapSchema],
  "v1/Namespace": [Namespace, namespaceSchema],
  "v1/Secret": [Secret, secretSchema],
  "v1/Service": [Service, serviceSchema],
};

/**
 * What the API server would refuse in one object: its kind unknown, a schema violation (from the
 * kubernetes-models class's `.validate()`), or a field the schema does not have. The last one
 * the models accept silently; `kubectl apply` refuses it (strict field validation), and a
 * misspelt `readinesProbe` would otherwise pass here and never probe anything.
 */
export function schemaProblems(o: K8sObject): string[] {
  const name = `${o.kind}/${o.metadata?.name}`;
  const entry = KINDS[`${o.apiVersion}/${o.kind}`];
  if (!entry) return [`${name}: ${o.apiVersion} ${o.kind} is not a kind this check knows`];
  const [Kind, schema] = entry;
  const problems: string[] = [];
  try {
    new Kind(structuredClone(o) as never).validate();
  } catch (err) {
    problems.push(`${name}: ${(err as Error).message}`);
  }
  // The schema reads every property it knows; one it never read is not part of the API.
  const read = new Set<string>();
  schema(tracked(o, "", read));
  for (const path of unread(o, "", read)) problems.push(`${name}: unknown field ${path.slice(1).replaceAll("/", ".")}`);
  return problems;
}

function tracked(v: unknown, path: string, read: Set<string>): unknown {
  if (!v || typeof v !== "object") return v;
  return new Proxy(v, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || !Object.hasOwn(target, key)) return value;
      read.add(`${path}/${key}`);
      return tracked(value, `${path}/${key}`, read);
    },
  });
}

function unread(v: unknown, path: string, read: Set<string>): string[] {
  if (!v || typeof v !== "object") return [];
  return Object.entries(v).flatMap(([key, value]) => {
    const p = `${path}/${key}`;
    return read.has(p) ? unread(value, p, read) : [p];
  });
}
