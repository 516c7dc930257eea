import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isAlias, parseAllDocuments, visit } from "yaml";

/** A Kubernetes object as the manifests write it; the checks read the fields they need. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/**
 * The part of kustomize the manifests under deploy/kubernetes use, so `npm test` can render
 * them without kubectl: `resources` (files and directories with a kustomization.yaml),
 * `patches` of `path:` files (a strategic merge of objects matched by kind and name: maps merge,
 * lists of objects that all have a `name` merge by name, other lists and values replace, `null`
 * removes), `namespace` and `images`. Any other field is refused, so that a manifest using more
 * than this renders nowhere rather than wrongly here.
 */
const KNOWN = new Set(["apiVersion", "kind", "resources", "patches", "namespace", "images"]);
/** Kinds without a namespace (of those the manifests could use). */
const CLUSTER_SCOPED = new Set(["Namespace", "PersistentVolume", "StorageClass", "ClusterRole", "ClusterRoleBinding"]);

interface Kustomization {
  resources?: string[];
  patches?: Array<{ path?: string; patch?: string; target?: unknown }>;
  namespace?: string;
  images?: Array<{ name: string; newName?: string; newTag?: string; digest?: string }>;
}

export function renderKustomization(dir: string): K8sObject[] {
  const file = join(dir, "kustomization.yaml");
  const k = readYaml(file)[0] as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(k).filter((f) => !KNOWN.has(f));
  if (unknown.length > 0) throw new Error(`${file}: ${unknown.join(", ")} is not rendered by this test's kustomize subset`);
  const out: K8sObject[] = [];
  for (const r of k.resources ?? []) {
    const path = join(dir, r);
    const objects = statSync(path).isDirectory() ? renderKustomization(path) : (readYaml(path) as K8sObject[]);
    for (const o of objects) {
      const clash = out.find((x) => id(x) === id(o));
      if (clash) throw new Error(`${file}: ${id(o)} is defined twice (kustomize refuses that)`);
      out.push(o);
    }
  }
  for (const p of k.patches ?? []) {
    if (!p.path || p.patch !== undefined || p.target !== undefined) throw new Error(`${file}: only patches with a path are rendered`);
    for (const patch of readYaml(join(dir, p.path)) as K8sObject[]) {
      const i = out.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata?.name);
      if (i < 0)
        throw new Error(`${file}: patch ${p.path} targets ${patch.kind}/${patch.metadata?.name}, which is not among the resources`);
      out[i] = merge(out[i], patch) as K8sObject;
    }
  }
  if (k.namespace) for (const o of out) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
  for (const image of k.images ?? []) for (const c of containersOf(out)) c.image = retag(c.image, image);
  return out;
}

const id = (o: K8sObject) => `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;

/** Every YAML document of a file, refusing anchors and aliases (kustomize's YAML library does not keep them everywhere). */
export function readYaml(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  const out: unknown[] = [];
  for (const d of docs) {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message}`);
    visit(d, {
      Node(_key, node) {
        if (isAlias(node)) throw new Error(`${file}: YAML alias *${node.source}; write the value out`);
        if ("anchor" in node && node.anchor) throw new Error(`${file}: YAML anchor &${node.anchor}; write the value out`);
      },
    });
    const v = d.toJS();
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

function merge(base: unknown, patch: unknown): unknown {
  if (patch === null) return undefined;
  if (Array.isArray(patch)) {
    if (!Array.isArray(base) || !byName(patch) || !byName(base)) return structuredClone(patch);
    const out = [...base];
    for (const item of patch as Array<{ name: string }>) {
      const i = out.findIndex((x) => (x as { name: string }).name === item.name);
      if (i < 0) out.push(structuredClone(item));
      else out[i] = merge(out[i], item);
    }
    return out;
  }
  if (patch && typeof patch === "object") {
    const out: Record<string, unknown> = base && typeof base === "object" && !Array.isArray(base) ? { ...base } : {};
    for (const [key, value] of Object.entries(patch)) {
      const merged = merge(out[key], value);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    }
    return out;
  }
  return patch;
}

const byName = (list: unknown[]) => list.length > 0 && list.every((x) => x && typeof x === "object" && "name" in x);

export interface Container {
  name: string;
  image: string;
  [field: string]: unknown;
}

/** The pod template of a workload, if the object is one. */
export function podSpecOf(o: K8sObject): { spec: Record<string, unknown>; labels: Record<string, string> } | undefined {
  const spec = o.spec as { template?: { metadata?: { labels?: Record<string, string> }; spec?: Record<string, unknown> } } | undefined;
  if (!spec?.template?.spec) return undefined;
  return { spec: spec.template.spec, labels: spec.template.metadata?.labels ?? {} };
}

function containersOf(objects: K8sObject[]): Container[] {
  return objects.flatMap((o) => {
    const pod = podSpecOf(o)?.spec;
    return [...((pod?.initContainers as Container[]) ?? []), ...((pod?.containers as Container[]) ?? [])];
  });
}

/** kustomize's images transformer: a container image named `name` (any tag) gets the new name, tag or digest. */
function retag(image: string, t: { name: string; newName?: string; newTag?: string; digest?: string }): string {
  const m = /^(.*?)(?::([^:/@]+))?(?:@(.+))?$/.exec(image);
  const [name = image, tag, digest] = m ? [m[1], m[2], m[3]] : [image];
  if (name !== t.name) return image;
  const newName = t.newName ?? name;
  if (t.digest) return `${newName}@${t.digest}`;
  if (t.newTag) return `${newName}:${t.newTag}`;
  return `${newName}${tag ? `:${tag}` : ""}${digest ? `@${digest}` : ""}`;
}
