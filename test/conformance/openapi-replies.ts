import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { expect } from "vitest";
import type { CallResult } from "../support/http.ts";

interface PathItem {
  get: { responses: Record<string, { $ref?: string }> };
}

const pointer = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * Holds the gateway's own `/openapi.json` and checks replies against it: every reply a
 * conformance scenario sees for a documented operation must have a documented status and, for
 * HTTP 200, match the operation's reply schema in that variant (its success shape or one of the
 * errors it declares), so the document cannot drift from what the broker answers.
 */
export class OpenApiReplies {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  private readonly doc: { paths: Record<string, PathItem> };
  private readonly compiled = new Map<string, ValidateFunction>();

  private constructor(doc: { paths: Record<string, PathItem> }) {
    this.doc = doc;
    this.ajv.addSchema(doc as object, "openapi.json");
  }

  static async load(base: string): Promise<OpenApiReplies> {
    const res = await fetch(`${base}/openapi.json`);
    if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
    return new OpenApiReplies((await res.json()) as { paths: Record<string, PathItem> });
  }

  private validator(ref: string, mediaType: string): ValidateFunction {
    const key = `${ref}|${mediaType}`;
    let v = this.compiled.get(key);
    if (!v) {
      v = this.ajv.compile({ $ref: `openapi.json${ref}/content/${pointer(mediaType)}/schema` });
      this.compiled.set(key, v);
    }
    return v;
  }

  /** Checks one reply to `path` (context path included); paths the document does not list are left to the scenario. */
  check(path: string, r: CallResult): void {
    const item = this.doc.paths[path];
    if (!item) return;
    const response = item.get.responses[String(r.status)];
    expect(response, `HTTP ${r.status} of ${path} is not in /openapi.json: ${r.text}`).toBeDefined();
    if (r.status !== 200 || !response?.$ref) return;
    const media = r.contentType.startsWith("text/plain") ? "text/plain" : "application/json";
    const validate = this.validator(response.$ref, media);
    const value = media === "text/plain" ? r.text : r.json;
    const ok = validate(value);
    expect(
      ok,
      `${path} answered ${r.text.slice(0, 400)}\nwhich /openapi.json does not allow: ${JSON.stringify(validate.errors?.slice(0, 5))}`,
    ).toBe(true);
  }
}
