import { z } from "zod";
import { callbackBodySchema, type Mount, type Variant } from "@evb/domain";
import type { Operation } from "../http/operation.ts";
import { allErrorComponents, errorComponentName } from "./error-schemas.ts";
import type { OperationSchema, OperationSchemas } from "./operation-schema.ts";

type JsonSchema = Record<string, unknown>;
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

export interface DocumentInput {
  mounts: readonly Mount[];
  operations: readonly Pick<Operation, "path" | "kind" | "variants">[];
  schemas: OperationSchemas;
  version: string;
}

/** zod → JSON Schema 2020-12, without the top-level `$schema` (the document declares the dialect). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

const ref = (name: string, kind = "schemas") => ({ $ref: `#/components/${kind}/${name}` });

/** Whether the variant wraps this kind of operation's success in `{code, message, data}` (replies.ts). */
function envelopes(v: Variant, kind: "rest" | "admin"): boolean {
  return v === "L" || (v === "M" && kind === "admin");
}

/** One OpenAPI parameter per property of `params`, found `where` (the query string, or a header). */
function listed(params: z.ZodObject, where: "query" | "header"): unknown[] {
  const js = jsonSchema(params, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, { description, ...rest }]) => ({
    name,
    in: where,
    required: (js.required ?? []).includes(name),
    ...(description ? { description } : {}),
    schema: rest,
  }));
}

function parameters(schema: OperationSchema, v: Variant): unknown[] {
  const out = listed(schema.params(v), "query");
  if (schema.headers) out.push(...listed(schema.headers, "header"));
  if (schema.extensions) {
    out.push({
      name: "extensions",
      in: "query",
      style: "form",
      explode: true,
      description:
        "Every parameter whose name starts with `event-` (e.g. `event-format=json`) becomes an extension; the rendered map is at most 1024 characters (100204).",
      schema: { type: "object", propertyNames: { pattern: "^event-" }, additionalProperties: { type: "string" } },
    });
  }
  return out;
}

/** POST's form body (or JSON body); `required` when some parameter is, so generated clients cannot leave it out. */
function formBody(schema: OperationSchema, v: Variant): unknown {
  const js = jsonSchema(schema.params(v), "input");
  const required = Array.isArray(js.required) && js.required.length > 0;
  if (schema.jsonBody) return { required, content: { "application/json": { schema: js } } };
  if (schema.extensions) js.patternProperties = { "^event-": { type: "string" } };
  return { required, content: { "application/x-www-form-urlencoded": { schema: js } } };
}

function errorRefs(schema: OperationSchema, v: Variant): unknown[] {
  return [...new Set(["GENERIC" as const, ...schema.errors(v)])].map((n) => ref(errorComponentName(v, n)));
}

/** The 200 reply of an operation in a variant: its success shape, or one of its errors. */
function okResponse(op: Pick<Operation, "kind">, schema: OperationSchema, v: Variant): JsonSchema {
  const payload = jsonSchema(schema.reply(v), "output");
  const kind = schema.replyKind ?? "data";
  const errors = errorRefs(schema, v);
  if (kind === "text") {
    return {
      description: "The id as raw text (text/plain), or a broker error (JSON)",
      content: { "text/plain": { schema: payload }, "application/json": { schema: { oneOf: errors } } },
    };
  }
  const success =
    kind === "data" && envelopes(v, op.kind)
      ? {
          type: "object",
          properties: { code: { type: "integer", const: 0 }, message: { const: "success" }, data: payload },
          required: ["code", "message", "data"],
          additionalProperties: false,
        }
      : payload;
  return {
    description:
      "HTTP 200 for every reply: the success shape, or one of the broker errors (code and exact message) in this variant's shape",
    content: { "application/json": { schema: { oneOf: [success, ...errors] } } },
  };
}

const componentKey = (v: Variant, path: string) => `${v}.${path.replaceAll("/", ".")}`;

function webhooks(): Record<string, unknown> {
  const header = (name: string, required: boolean, pattern: string, description: string) => ({
    name,
    in: "header",
    required,
    description,
    schema: { type: "string", pattern },
  });
  return {
    callback: {
      post: {
        operationId: "callback",
        summary: "One event POSTed to a subscription's callback URL",
        description:
          "Sent by the notifier for every event matching a subscription, one per request, in ledger order per subscription, at least once (drop repeats by `webhook-id`). Any 2xx answer is delivery; anything else, a timeout or a refused connection is retried with backoff and the subscription is dead-lettered after RETRY_MAX_ATTEMPTS (see admin/deadLetters). With WEBHOOK_SECRETS set, the Standard Webhooks signature headers are added: `v1,` + base64(HMAC-SHA256(key, `<webhook-id>.<webhook-timestamp>.<raw body>`)), one per secret. A subscription with `bodyMode=raw` gets the published content as the body instead (content-type from its `event-content-type` or `event-format`, else application/octet-stream) with `evb-event-id`, `evb-topic` and `evb-subscription-id` headers; one with custom headers gets them too; a test delivery (admin/testDelivery) carries `webhook-test: true`.",
        parameters: [
          header("webhook-id", true, "^msg_", "`msg_<subscriptionId>_<eventId>`, the same on every retry"),
          header("webhook-timestamp", false, "^\\d+$", "Seconds since the epoch of this attempt (signed callbacks)"),
          header(
            "webhook-signature",
            false,
            "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$",
            "Space-separated signatures, newest secret first (signed callbacks)",
          ),
        ],
        requestBody: {
          required: true,
          description: "Subscriptions taken through variant E get E's Event shape (no extensions).",
          content: {
            "application/json": {
              schema: { oneOf: [jsonSchema(callbackBodySchema("M"), "output"), jsonSchema(callbackBodySchema("E"), "output")] },
            },
          },
        },
        responses: {
          "2XX": { description: "Delivered" },
          default: { description: "A failed attempt: retried" },
        },
      },
    },
  };
}

/** What the document does not describe: the other ways in, on the same publish path and ledger (docs/protocols.md, docs/jsonrpc.md). */
const OTHER_PROTOCOLS = `

## Other protocols

Besides HTTP, the gateway speaks:

- **STOMP** over WebSocket at \`<context>/stomp\` of every mount (e.g. \`ws://host:8080/event-broker/stomp\`);
- **MQTT** 3.1.1 and 5 over TCP on \`MQTT_PORT\` (off unless set) and over WebSocket at \`<context>/mqtt\`.

A publish over either is the same sealed publish as \`rest/publish\`. Frames, packets and their answers: docs/protocols.md.

- **JSON-RPC 2.0** at \`<context>/jsonrpc\` of every mount (POST a JSON body, or GET with \`method\`, \`id\`, \`params\`): the methods \`open\`, \`close\`, \`exist\`, \`state\`, \`list\`, \`getEvent\` and \`publish\`, each the REST operation of its name with its checks, codes and access rules, results bare in the mount's shapes. Methods, parameters, batches and errors: docs/jsonrpc.md.`;

/**
 * The OpenAPI 3.1 description of every mounted variant: one path per operation the variant has
 * (GET with query parameters and POST with a form body; the broker takes any method), every reply
 * with the variant's envelope and every broker error it can answer, and the callback as a webhook.
 * Operations without a schema are listed with an open reply and named in `undocumented`.
 */
export function buildOpenApiDocument(input: DocumentInput): { document: OpenApiDocument; undocumented: string[] } {
  const paths: Record<string, Record<string, unknown>> = {};
  const responses: Record<string, unknown> = refusalResponses();
  const undocumented = new Set<string>();
  for (const mount of input.mounts) {
    for (const op of input.operations) {
      if (!op.variants.includes(mount.variant)) continue;
      const schema = input.schemas[op.path];
      const key = componentKey(mount.variant, op.path);
      if (!schema) undocumented.add(op.path);
      responses[key] = schema
        ? okResponse(op, schema, mount.variant)
        : { description: "Not described yet", content: { "application/json": { schema: {} } } };
      paths[`${mount.path}/${op.path}`] = pathItem(mount.variant, op, schema, key);
    }
  }
  const document: OpenApiDocument = {
    openapi: "3.1.0",
    info: {
      title: "Event broker HTTP interface",
      version: input.version,
      description:
        "Every mounted variant (L, M, E) under its context path. Parameters come from the query string or a urlencoded/multipart form body; any HTTP method is accepted (GET and POST are described). Every reply an operation produces is HTTP 200, errors included; the error codes listed per operation are those it can answer, besides the variant's generic code." +
        OTHER_PROTOCOLS,
      // The original broker's licence, which this one keeps (LICENSE at the repository root).
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    servers: [{ url: "/" }],
    security: [{}, { basicAuth: [] }, { bearerAuth: [] }],
    paths,
    webhooks: webhooks(),
    components: {
      schemas: allErrorComponents(),
      responses,
      securitySchemes: { basicAuth: { type: "http", scheme: "basic" }, bearerAuth: { type: "http", scheme: "bearer" } },
    },
  };
  return { document, undocumented: [...undocumented] };
}

/** The answers of the access checks in front of every operation (not the operation's: no envelope, not HTTP 200). */
function refusalResponses(): Record<string, unknown> {
  const refusal = (status: number, description: string) => ({
    description,
    content: {
      "application/json": {
        schema: {
          type: "object",
          properties: { status: { const: status }, error: { type: "string" }, message: { type: "string" } },
          required: ["status", "error", "message"],
        },
      },
    },
  });
  return {
    Unauthorized: refusal(
      401,
      "API_KEYS or API_BASIC_AUTH is on and no valid key (Authorization: Bearer) or Basic credentials came; empty body when only Basic authentication is on",
    ),
    Forbidden: refusal(
      403,
      "The API key lacks the operation's role or group; empty body when the caller's address is not on API_ALLOWED_CIDRS",
    ),
    TooManyRequests: refusal(429, "The API key's publish rate is used up; Retry-After says when to retry"),
    Unavailable: refusal(503, "The API key could not be checked now (key store unreachable); retry"),
  };
}

/** An operation's path in one variant: GET with query parameters, POST with a form body; its 200 reply is the component `key`. */
function pathItem(v: Variant, op: Pick<Operation, "path">, schema: OperationSchema | undefined, key: string): Record<string, unknown> {
  const common = {
    summary: schema?.summary ?? op.path,
    ...(schema?.description ? { description: schema.description } : {}),
    tags: [`${v}: ${schema?.tag ?? "other"}`],
    responses: {
      "200": ref(key, "responses"),
      "401": ref("Unauthorized", "responses"),
      "403": ref("Forbidden", "responses"),
      ...(op.path === "rest/publish" || op.path === "rest/publishBatch" ? { "429": ref("TooManyRequests", "responses") } : {}),
      "503": ref("Unavailable", "responses"),
    },
  };
  const id = `${v}_${op.path.replaceAll("/", "_")}`;
  return {
    // A JSON body is read whatever the method: GET describes it as POST does.
    get: schema?.jsonBody
      ? { operationId: `${id}_get`, ...common, requestBody: formBody(schema, v) }
      : { operationId: `${id}_get`, ...common, ...(schema ? { parameters: parameters(schema, v) } : {}) },
    post: {
      operationId: `${id}_post`,
      ...common,
      ...(schema?.headers ? { parameters: listed(schema.headers, "header") } : {}),
      ...(schema ? { requestBody: formBody(schema, v) } : {}),
    },
  };
}
