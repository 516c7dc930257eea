import { useState } from "preact/hooks";
import { html } from "./html.js";

/** An event's content (Base64 on the wire) as UTF-8 text; bytes that are not UTF-8 show as U+FFFD. */
export function decodeContent(base64) {
  try {
    const bytes = Uint8Array.from(atob(base64 ?? ""), (c) => c.charCodeAt(0));
    return new TextDecoder("utf-8").decode(bytes);
  } catch {
    return "";
  }
}

/** The content as indented JSON, or why it is not JSON. */
function prettyJson(text) {
  try {
    return { ok: true, text: JSON.stringify(JSON.parse(text), null, 2) };
  } catch (err) {
    return { ok: false, text: `Not JSON: ${err.message}` };
  }
}

const VIEWS = [
  ["text", "Text"],
  ["json", "JSON"],
  ["base64", "Base64"],
];

/**
 * An event's payload in three views: as text (UTF-8), as pretty-printed JSON (when it parses) and
 * as the Base64 the API carries. Rendered as text nodes only: a payload never becomes markup.
 */
export function PayloadView({ content }) {
  const text = decodeContent(content);
  const json = prettyJson(text);
  const [view, setView] = useState(json.ok ? "json" : "text");
  const shown = view === "base64" ? content : view === "json" ? json.text : text;
  return html`
    <div class="payload" data-testid="payload">
      <div class="tabs" role="tablist">
        ${VIEWS.map(
          ([id, label]) => html`
            <button type="button" role="tab" aria-selected=${view === id} class=${view === id ? "active" : ""} onClick=${() => setView(id)} data-testid=${`view-${id}`}>
              ${label}
            </button>
          `,
        )}
      </div>
      <pre class=${view === "json" && !json.ok ? "muted" : ""} data-testid="payload-text">${shown}</pre>
    </div>
  `;
}
