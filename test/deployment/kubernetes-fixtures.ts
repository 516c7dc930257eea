import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadGatewayConfig } from "../../services/gateway/src/config.ts";
import { loadIndexerConfig } from "../../services/indexer/src/config.ts";
import { loadNotifierConfig } from "../../services/notifier/src/config.ts";
import { parseDockerfile } from "./compose-model.ts";
import type { KubeCheckOptions } from "./kubernetes-check.ts";
import { type Container, type K8sObject, podSpecOf, readYaml, renderKustomization } from "./kustomize-render.ts";
import { SERVICE_SCHEMAS } from "./service-schemas.ts";

// What kubernetes.test.ts and kubernetes-breaks.test.ts share: the rendered overlays, the check's
// options with the overlay's example Secret filled in, and finders for the objects they look at.
export const ROOT = join(import.meta.dirname, "..", "..");
export const DIR = join(ROOT, "deploy", "kubernetes");
export const image = parseDockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
export const OVERLAYS = ["in-cluster", "external"] as const;
export type Overlay = (typeof OVERLAYS)[number];

export const rendered = Object.fromEntries(OVERLAYS.map((o) => [o, renderKustomization(join(DIR, "overlays", o))])) as Record<
  Overlay,
  K8sObject[]
>;

/** The overlay's secret.example.yaml with its <…> placeholders filled as a user would. */
export function exampleSecret(overlay: Overlay, fill = true): Record<string, Record<string, string>> {
  const secret = readYaml(join(DIR, "overlays", overlay, "secret.example.yaml"))[0] as K8sObject & { stringData: Record<string, string> };
  const key = randomBytes(32).toString("base64");
  const data = Object.fromEntries(
    Object.entries(secret.stringData).map(([k, v]) => [
      k,
      fill ? v.replace(/<[^>]*>/g, k.endsWith("PASSWORD") || k.endsWith("URL") ? "pw" : key) : v,
    ]),
  );
  return { [secret.metadata.name]: data };
}

export const options = (overlay: Overlay, secrets = exampleSecret(overlay)): KubeCheckOptions => ({
  image,
  imageName: "event-broker",
  schemas: SERVICE_SCHEMAS,
  loaders: { gateway: loadGatewayConfig, indexer: loadIndexerConfig, notifier: loadNotifierConfig },
  secrets,
  stores: overlay,
});

export const find = (objects: K8sObject[], kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind}/${name} is not rendered`);
  return o as K8sObject & { spec: Record<string, unknown> };
};
export const container = (objects: K8sObject[], kind: string, name: string) =>
  ((podSpecOf(find(objects, kind, name))?.spec.containers ?? []) as Container[])[0] as Container;
export type EnvVar = { name: string; value?: string; valueFrom?: unknown };
export const envOf = (objects: K8sObject[], kind: string, name: string) => container(objects, kind, name).env as EnvVar[];
