import type { OpenApiDocument } from "./openapi-document.ts";

type Json = Record<string, unknown>;

const esc = (s: unknown) =>
  String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

/** Follows a local `$ref` (`#/components/...`) once. */
function deref(doc: OpenApiDocument, node: unknown): Json {
  const r = (node as { $ref?: string } | null)?.$ref;
  if (!r) return (node ?? {}) as Json;
  let at: unknown = doc;
  for (const part of r.slice(2).split("/")) at = (at as Json)[part];
  return (at ?? {}) as Json;
}

/** A schema in one line for the parameter table: type, bounds, pattern. */
function brief(s: Json): string {
  const bits = [String(s.type ?? (s.const !== undefined ? JSON.stringify(s.const) : "any"))];
  for (const k of ["minimum", "maximum", "minLength", "maxLength", "pattern"])
    if (s[k] !== undefined && s[k] !== 9007199254740991) bits.push(`${k} ${s[k]}`);
  return bits.join(", ");
}

function operationHtml(doc: OpenApiDocument, path: string, op: Json): string {
  const params = ((op.parameters as Json[] | undefined) ?? [])
    .map(
      (p) =>
        `<tr><td><code>${esc(p.name)}</code>${p.required ? " *" : ""}</td><td>${esc(brief(p.schema as Json))}</td><td>${esc(p.description)}</td></tr>`,
    )
    .join("");
  const ok = deref(doc, (op.responses as Json)["200"]);
  const content = (ok.content ?? {}) as Record<string, { schema: Json }>;
  const json = content["application/json"]?.schema;
  const variants = ((json?.oneOf as Json[] | undefined) ?? []).map((s) => deref(doc, s));
  const success = content["text/plain"]?.schema ?? variants.find((s) => !String(s.title ?? "").match(/^-?\d+ /));
  const errors = variants
    .filter((s) => String(s.title ?? "").match(/^-?\d+ /))
    .map((s) => {
      const p = s.properties as Json;
      const msg = (p.message as Json).const ?? "(the underlying failure's text)";
      return `<tr><td>${esc((p.code as Json).const)}</td><td>${esc(msg)}</td></tr>`;
    })
    .join("");
  return `<section id="${esc(path)}"><h3><code>${esc(path)}</code></h3><p>${esc(op.summary)}</p>${op.description ? `<p>${esc(op.description)}</p>` : ""}
<h4>Parameters</h4>${params ? `<table><tr><th>name</th><th>rule</th><th></th></tr>${params}</table>` : "<p>none</p>"}
<h4>Success (HTTP 200)</h4><pre>${esc(JSON.stringify(success ?? {}, null, 2))}</pre>
<h4>Errors (HTTP 200)</h4><table><tr><th>code</th><th>message</th></tr>${errors}</table></section>`;
}

/**
 * The reference page at /openapi.html, rendered on the server from the document: no scripts,
 * no external assets, so it works offline and behind any content-security policy.
 */
export function renderReferencePage(doc: OpenApiDocument): string {
  const info = doc.info as Json;
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.get as Json;
    const tag = ((op.tags as string[]) ?? ["other"])[0] as string;
    byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(doc, path, op)]);
  }
  const toc = [...byTag.keys()].map((t) => `<li><a href="#tag-${esc(t)}">${esc(t)}</a></li>`).join("");
  const sections = [...byTag].map(([t, ops]) => `<h2 id="tag-${esc(t)}">${esc(t)}</h2>${ops.join("\n")}`).join("\n");
  const hook = ((doc.webhooks as Json).callback as Json).post as Json;
  const headers = (hook.parameters as Json[])
    .map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.description)}</td></tr>`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(info.title)}</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.6rem;overflow:auto;max-height:20rem}
table{border-collapse:collapse;margin:.3rem 0}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}
section{border-top:1px solid #ccc;margin-top:1.5rem}h2{margin-top:2.5rem}</style></head><body>
<h1>${esc(info.title)} <small>${esc(info.version)}</small></h1><p>${esc(info.description)}</p>
<p>Machine-readable: <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p><ul>${toc}<li><a href="#webhook">callback (webhook)</a></li></ul>
${sections}
<h2 id="webhook">Callback (webhook)</h2><p>${esc(hook.description)}</p><table>${headers}</table>
<pre>${esc(JSON.stringify((((hook.requestBody as Json).content as Json)["application/json"] as Json).schema, null, 2))}</pre>
</body></html>`;
}
