import { html } from "./html.js";

/**
 * Asks for an API key when the gateway answered 401 (API_KEYS on). The key stays in this tab
 * (sessionStorage) and goes with every API call; `onKey` retries with it.
 */
export function KeyForm({ onKey, rejected }) {
  const onSubmit = (e) => {
    e.preventDefault();
    const key = String(new FormData(e.currentTarget).get("key") ?? "").trim();
    if (key) onKey(key);
  };
  return html`
    <section class="key-form" data-testid="key-form">
      <h2>API key required</h2>
      <p>This gateway answers only callers with an API key (<code>npm run keys -- create --roles read,admin …</code>).</p>
      ${rejected ? html`<p class="error" role="alert">The gateway did not accept that key.</p>` : null}
      <form class="inline" onSubmit=${onSubmit}>
        <input name="key" type="password" autocomplete="off" size="60" placeholder="evbk_…" aria-label="API key" />
        <button type="submit" class="primary">Use key</button>
      </form>
      <p class="muted small">Kept in this tab only, sent as <code>Authorization: Bearer</code>.</p>
    </section>
  `;
}
