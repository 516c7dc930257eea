import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { type K8sObject, renderKustomization } from "./kustomize-render.ts";

const root = mkdtempSync(join(tmpdir(), "kustomize-render-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A kustomization tree from file name → text, under a fresh folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, "t-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - name: web
          image: example/web
          env: [{ name: A, value: "1" }, { name: B, value: "2" }]
          args: ["x", "y"]
---
apiVersion: v1
kind: Namespace
metadata: { name: apps }
`;

describe("the kustomize subset the manifests are rendered with", () => {
  it("renders a base through an overlay: resources, a strategic-merge patch, namespace and images", () => {
    const dir = tree({
      "base/kustomization.yaml": "resources: [web.yaml]\n",
      "base/web.yaml": deployment,
      "overlay/kustomization.yaml": `namespace: apps
resources: [../base]
patches: [{ path: patch.yaml }]
images: [{ name: example/web, newName: registry.example/web, newTag: "1.2" }]
`,
      "overlay/patch.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: web
          env: [{ name: B, value: "20" }, { name: C, value: "3" }]
          args: ["z"]
`,
    });
    const [web, ns] = renderKustomization(join(dir, "overlay"));
    expect(web?.metadata.namespace).toBe("apps");
    expect(ns?.metadata).toEqual({ name: "apps" });
    const spec = web?.spec as { replicas: number; template: { spec: { containers: Array<Record<string, unknown>> } } };
    expect(spec.replicas).toBe(3);
    expect(spec.template.spec.containers[0]).toEqual({
      name: "web",
      image: "registry.example/web:1.2",
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "20" },
        { name: "C", value: "3" },
      ],
      args: ["z"],
    });
  });

  it("refuses what it does not render, rather than rendering it wrongly", () => {
    const refused = (files: Record<string, string>) => () => renderKustomization(tree(files));
    expect(refused({ "kustomization.yaml": "resources: [a.yaml]\ncommonLabels: { a: b }\n", "a.yaml": deployment })).toThrow(
      "commonLabels is not rendered",
    );
    expect(refused({ "kustomization.yaml": "patches: [{ patch: 'x' }]\n" })).toThrow("only patches with a path");
    expect(refused({ "kustomization.yaml": "resources: [a.yaml, a.yaml]\n", "a.yaml": deployment })).toThrow("defined twice");
    expect(refused({ "kustomization.yaml": "resources: [a.yaml]\n", "a.yaml": "a: &x 1\nb: *x\n" })).toThrow("YAML anchor &x");
    expect(
      refused({
        "kustomization.yaml": "resources: [a.yaml]\npatches: [{ path: p.yaml }]\n",
        "a.yaml": deployment,
        "p.yaml": "kind: Service\nmetadata: { name: web }\n",
      }),
    ).toThrow("targets Service/web, which is not among the resources");
  });

  // Where kubectl is installed (not required: the checks above stand without it), the renderer
  // must give exactly what kustomize gives for the project's own manifests.
  const kubectl = (() => {
    try {
      execFileSync("kubectl", ["version", "--client"], { stdio: "ignore", timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!kubectl)("renders deploy/kubernetes exactly as kubectl kustomize does", () => {
    const dir = join(import.meta.dirname, "..", "..", "deploy", "kubernetes");
    const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
    const sorted = (l: K8sObject[]) => [...l].sort((a, b) => key(a).localeCompare(key(b)));
    for (const d of ["base", "overlays/in-cluster", "overlays/external"]) {
      const text = execFileSync("kubectl", ["kustomize", join(dir, d)], { encoding: "utf8", timeout: 30_000 });
      const theirs = parseAllDocuments(text).map((doc) => doc.toJS() as K8sObject);
      expect(sorted(renderKustomization(join(dir, d))), d).toEqual(sorted(theirs));
    }
  });
});
