import type express from "express";
import type { Logger, Mount } from "@evb/domain";
import type { Operation } from "../http/operation.ts";
import { buildOpenApiDocument } from "./openapi-document.ts";
import { OPERATION_SCHEMAS } from "./operation-schemas.ts";
import { renderReferencePage } from "./reference-page.ts";

/**
 * Serves `/openapi.json` (the OpenAPI 3.1 description of the mounted variants) and
 * `/openapi.html` (a reference page rendered from it). Both are built once, at start, from the
 * operations the gateway really mounts; like /health they sit outside the mounts.
 */
export function mountOpenApi(
  app: express.Express,
  opts: { mounts: readonly Mount[]; operations: readonly Operation[]; version: string; logger: Logger },
): void {
  const { document, undocumented } = buildOpenApiDocument({ ...opts, schemas: OPERATION_SCHEMAS });
  if (undocumented.length > 0)
    opts.logger.warn({ operations: undocumented }, "operations without an OpenAPI schema (add a *.schema.ts entry)");
  const json = JSON.stringify(document);
  const html = renderReferencePage(document);
  app.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(json);
  });
  app.get("/openapi.html", (_req, res) => {
    res.type("text/html").send(html);
  });
}
