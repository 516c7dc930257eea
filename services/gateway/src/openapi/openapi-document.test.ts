import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi-document.ts";
import { OPERATION_SCHEMAS } from "./operation-schemas.ts";
import { renderReferencePage } from "./reference-page.ts";
import { DOCUMENTED_MOUNTS, DOCUMENTED_OPERATIONS } from "../../../../test/support/openapi-fixture.ts";

const OPERATIONS = DOCUMENTED_OPERATIONS;
const MOUNTS = DOCUMENTED_MOUNTS;
const { document, undocumented } = buildOpenApiDocument({
  mounts: MOUNTS,
  operations: OPERATIONS,
  schemas: OPERATION_SCHEMAS,
  version: "0.1.0",
});

describe("the OpenAPI document", () => {
  it("has a schema for every operation, and no schema for an operation that does not exist", () => {
    expect(undocumented).toEqual([]);
    const paths = new Set(OPERATIONS.map((o) => o.path));
    expect(Object.keys(OPERATION_SCHEMAS).filter((p) => !paths.has(p))).toEqual([]);
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    const res = await new Validator().validate(structuredClone(document));
    expect(res.errors ?? [], JSON.stringify(res.errors, null, 1)?.slice(0, 2000)).toEqual([]);
    expect(res.valid).toBe(true);
    // The validator does check: the same document without its info object is refused.
    const { info: _info, ...broken } = structuredClone(document);
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("lists exactly the operations each variant mounts", () => {
    for (const m of MOUNTS) {
      const listed = Object.keys(document.paths)
        .filter((p) => p.startsWith(`${m.path}/`))
        .map((p) => p.slice(m.path.length + 1))
        .sort();
      const mounted = OPERATIONS.filter((o) => o.variants.includes(m.variant))
        .map((o) => o.path)
        .sort();
      expect(listed, m.variant).toEqual(mounted);
    }
    expect(document.paths["/event-broker/rest/subscribe"]).toBeUndefined();
    expect(document.paths["/event-e/admin/blockchaininfo"]).toBeDefined();
  });

  it("describes the callback and its signature headers as a webhook", () => {
    const hook = (document.webhooks as { callback: { post: { parameters: { name: string }[] } } }).callback.post;
    expect(hook.parameters.map((p) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
  });

  it("describes publish's Idempotency-Key header (GET and POST) and its idempotencyKey parameter", () => {
    type Op = { parameters?: { name: string; in: string }[]; requestBody?: unknown };
    const publish = document.paths["/event-broker/rest/publish"] as { get: Op; post: Op };
    expect(publish.get.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "idempotencyKey", in: "query" }),
        expect.objectContaining({ name: "Idempotency-Key", in: "header" }),
      ]),
    );
    expect(publish.post.parameters?.map((p) => [p.name, p.in])).toEqual([["Idempotency-Key", "header"]]);
    expect(JSON.stringify(publish.post.requestBody)).toContain("idempotencyKey");
  });

  it("states the licence, Apache-2.0 as the original broker's, with its URL", () => {
    expect(document.info).toMatchObject({ license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" } });
  });

  it("says where STOMP and MQTT are spoken, pointing to docs/protocols.md", () => {
    const text = (document.info as { description?: string }).description ?? "";
    for (const where of ["`<context>/stomp`", "`MQTT_PORT`", "`<context>/mqtt`", "docs/protocols.md"]) expect(text).toContain(where);
  });

  it("says where JSON-RPC is served, pointing to docs/jsonrpc.md (its calls are the operations listed here)", () => {
    const text = (document.info as { description?: string }).description ?? "";
    for (const where of ["`<context>/jsonrpc`", "docs/jsonrpc.md"]) expect(text).toContain(where);
    expect(Object.keys(document.paths).filter((p) => p.endsWith("/jsonrpc"))).toEqual([]);
  });

  type Described = { operationId?: string; requestBody?: { required?: boolean } };
  const described = (group: Record<string, Record<string, unknown>>) =>
    Object.entries(group).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => [`${m} ${p}`, op as Described] as const));

  it("gives every operation, the webhook's included, a unique operationId", () => {
    const all = [...described(document.paths), ...described(document.webhooks as Record<string, Record<string, unknown>>)];
    expect(all.length).toBe(2 * Object.keys(document.paths).length + 1);
    expect(all.filter(([, op]) => !op.operationId).map(([where]) => where)).toEqual([]);
    const ids = all.map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("marks a POST's form body required exactly when the operation has a required parameter", () => {
    for (const m of MOUNTS) {
      for (const op of OPERATIONS.filter((o) => o.variants.includes(m.variant))) {
        const post = (document.paths[`${m.path}/${op.path}`] as { post: Described }).post;
        const needs = Object.values(OPERATION_SCHEMAS[op.path]?.params(m.variant).shape ?? {}).some((p) => !p.safeParse(undefined).success);
        expect(post.requestBody?.required, `${m.variant} ${op.path}`).toBe(needs);
      }
    }
    // Spot checks, so the rule above cannot pass by marking nothing or everything.
    expect((document.paths["/event-m/rest/publish"] as { post: Described }).post.requestBody?.required).toBe(true);
    expect((document.paths["/event-m/rest/getEvent"] as { post: Described }).post.requestBody?.required).toBe(true);
    expect((document.paths["/event-m/admin/getVersion"] as { post: Described }).post.requestBody?.required).toBe(false);
    expect((document.webhooks as { callback: { post: Described } }).callback.post.requestBody?.required).toBe(true);
  });

  it("renders a reference page with every path and no script or external asset", () => {
    const html = renderReferencePage(document);
    for (const p of Object.keys(document.paths)) expect(html).toContain(`<code>${p}</code>`);
    expect(html).not.toMatch(/<script|<link|https?:\/\/(?!json-schema)/);
    expect(html).toContain("topic not exist");
  });
});
