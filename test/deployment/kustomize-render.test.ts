import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { renderKustomization } from "./kustomize-render.ts";

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
});
