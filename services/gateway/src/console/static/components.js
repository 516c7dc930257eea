import { html } from "./html.js";

/**
 * A table of `rows` with `columns` = [{ key, label, render?(row), className? }]. `rowKey(row)`
 * names each row (it becomes `data-key`, which the browser tests find rows by).
 */
export function Table({ columns, rows, rowKey, empty = "Nothing here yet.", testId }) {
  if (!rows || rows.length === 0) return html`<p class="empty" data-testid=${testId ? `${testId}-empty` : undefined}>${empty}</p>`;
  return html`
    <div class="table-wrap">
      <table data-testid=${testId}>
        <thead>
          <tr>
            ${columns.map((c) => html`<th class=${c.className}>${c.label}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (row, i) => html`
              <tr key=${rowKey ? rowKey(row) : i} data-key=${rowKey ? rowKey(row) : undefined}>
                ${columns.map((c) => html`<td class=${c.className} data-col=${c.key}>${c.render ? c.render(row) : show(row[c.key])}</td>`)}
              </tr>
            `,
          )}
        </tbody>
      </table>
    </div>
  `;
}

/** A value as text: null and undefined as a dash, objects as JSON. */
export function show(value) {
  if (value === null || value === undefined || value === "") return html`<span class="muted">—</span>`;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Long hashes and ids shortened in the middle, whole on hover. */
export function Short({ text, keep = 10 }) {
  if (typeof text !== "string" || text.length <= keep * 2 + 1) return show(text);
  return html`<span class="mono" title=${text}>${text.slice(0, keep)}…${text.slice(-keep)}</span>`;
}

/** Previous / next paging; `page` and `pages` count from 1. */
export function Pager({ page, pages, onPage, label }) {
  if (pages <= 1) return null;
  return html`
    <div class="pager">
      <button type="button" disabled=${page <= 1} onClick=${() => onPage(page - 1)} data-testid="prev">‹ Previous</button>
      <span data-testid="page-label">${label ?? `Page ${page} of ${pages}`}</span>
      <button type="button" disabled=${page >= pages} onClick=${() => onPage(page + 1)} data-testid="next">Next ›</button>
    </div>
  `;
}

export function ErrorNote({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message ?? String(error)}</p>`;
}

export function Loading() {
  return html`<p class="muted">Loading…</p>`;
}

/** A number with a caption, for the overview. */
export function Stat({ label, value, testId }) {
  return html`<div class="stat"><div class="stat-value" data-testid=${testId}>${show(value)}</div><div class="stat-label">${label}</div></div>`;
}

export function Badge({ ok, yes = "alive", no = "down" }) {
  return html`<span class=${`badge ${ok ? "ok" : "bad"}`}>${ok ? yes : no}</span>`;
}

/** A state word in the colour of its tone: "ok" (green), "warn" (amber), "bad" (red), "idle" (grey). */
export function ToneBadge({ tone, text, title }) {
  return html`<span class=${`badge ${tone}`} title=${title}>${text}</span>`;
}

/** Epoch milliseconds as local `yyyy-MM-dd HH:mm:ss`, as the admin operations write times; anything else as it is. */
export function when(ms) {
  if (typeof ms !== "number" || ms <= 0) return show(ms);
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  const text = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  return html`<span title=${String(ms)}>${text}</span>`;
}

/** A note after an action: what it did, or why it failed (role="status" for the tests and screen readers). */
export function Note({ note, testId = "action-note" }) {
  if (!note) return null;
  return html`<p class=${note.ok ? "notice" : "error"} role="status" data-testid=${testId}>${note.text}</p>`;
}

/**
 * A titled part of a page. With `state` (from useLoad) it shows a loading note or the error, and
 * `render(data)` once data is in; without, its children.
 */
export function Section({ title, state, render, children, actions, testId }) {
  let body = children;
  if (state) body = state.data === undefined ? (state.error ? null : html`<${Loading} />`) : render(state.data);
  return html`
    <section data-testid=${testId}>
      <header class="section-head">
        <h2>${title}</h2>
        ${actions}
      </header>
      <${ErrorNote} error=${state?.error} />
      ${body}
    </section>
  `;
}
