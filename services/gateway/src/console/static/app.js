import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { apiKey, config, fetchMetrics, needsCredentials, serves } from "./api.js";
import { ErrorNote, Loading } from "./components.js";
import { html } from "./html.js";
import { KeyForm } from "./key-form.js";
import { Blocks, Transactions } from "./pages/blocks.js";
import { Overview } from "./pages/overview.js";
import { Attempts } from "./pages/attempts.js";
import { DeadLetters } from "./pages/dead-letters.js";
import { Events } from "./pages/events.js";
import { Subscriptions } from "./pages/subscriptions.js";
import { Topics } from "./pages/topics.js";
import * as q from "./queries.js";
import { go, routeHref, Shell, useRoute } from "./state.js";

const PAGES = [
  { id: "overview", label: "Overview", view: Overview },
  { id: "topics", label: "Topics", view: Topics },
  { id: "blocks", label: "Blocks", view: Blocks },
  { id: "transactions", label: "Transactions", view: Transactions },
  { id: "events", label: "Events", view: Events },
  { id: "subscriptions", label: "Subscriptions", view: Subscriptions },
  { id: "dead-letters", label: "Dead letters", view: DeadLetters },
  { id: "attempts", label: "Attempts", view: Attempts, hidden: true },
];

/** The gateway's rendered OpenAPI reference, linked from the header where it exists. */
const REFERENCE_PAGE = "../openapi.html";

/** Seconds between automatic refreshes of the page shown (each one batched request, see api.js `read`). */
const REFRESH_SECONDS = 5;

/** What the gateway offers beyond the interface, found out once at start. */
async function detect() {
  const [{ mount }, groups, attempts, metrics, reference] = await Promise.all([
    config(),
    q.groups(),
    q.hasAttempts(),
    fetchMetrics().then(
      (t) => t !== null,
      () => false,
    ),
    serves(REFERENCE_PAGE),
  ]);
  return { mount, groups, features: { attempts, metrics, reference } };
}

function App() {
  const route = useRoute();
  const [env, setEnv] = useState(null);
  const [failure, setFailure] = useState(null);
  const [tick, setTick] = useState(0);
  const [auto, setAuto] = useState(true);

  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    setFailure(null);
    detect().then(setEnv, setFailure);
  }, [attempt]);
  const useKey = (key) => {
    apiKey.set(key);
    setAttempt((n) => n + 1);
  };
  const signOut = () => {
    apiKey.forget();
    setEnv(null);
    setAttempt((n) => n + 1);
  };
  useEffect(() => {
    if (!auto) return;
    const timer = setInterval(() => setTick((t) => t + 1), REFRESH_SECONDS * 1000);
    return () => clearInterval(timer);
  }, [auto]);

  const group = route.params.group ?? env?.groups[0] ?? "1";
  const shell = useMemo(
    () => ({
      group,
      groups: env?.groups ?? [],
      tick,
      variant: env?.mount.variant,
      features: env?.features ?? {},
      refresh: () => setTick((t) => t + 1),
    }),
    [group, tick, env],
  );
  if (failure && needsCredentials(failure)) {
    return html`<main><${KeyForm} onKey=${useKey} rejected=${apiKey.get() !== null} /></main>`;
  }
  if (failure) return html`<main><h1>event-broker console</h1><${ErrorNote} error=${failure} /></main>`;
  if (!env) return html`<main><${Loading} /></main>`;

  const page = PAGES.find((p) => p.id === route.page && (p.id !== "attempts" || env.features.attempts)) ?? PAGES[0];
  const View = page.view;
  const linkParams = route.params.group ? { group } : {};
  return html`
    <${Shell.Provider} value=${shell}>
      <header class="top">
        <h1><a href="#/overview">event-broker</a> <span class="muted">console</span></h1>
        <nav>
          ${PAGES.filter((p) => !p.hidden).map(
            (p) => html`<a href=${routeHref(p.id, linkParams)} class=${p.id === page.id ? "active" : ""} data-nav=${p.id}>${p.label}</a>`,
          )}
        </nav>
        <div class="controls">
          <label>
            Group
            <select value=${group} onChange=${(e) => go(page.id, { group: e.currentTarget.value })} data-testid="group">
              ${env.groups.map((g) => html`<option value=${g}>${g}</option>`)}
            </select>
          </label>
          <label title=${`Reload the page's data every ${REFRESH_SECONDS} s`}>
            <input type="checkbox" checked=${auto} onChange=${(e) => setAuto(e.currentTarget.checked)} /> Live
          </label>
          <button type="button" onClick=${shell.refresh} data-testid="refresh">Refresh</button>
          ${env.features.reference ? html`<a href=${REFERENCE_PAGE} target="_blank" rel="noopener" data-testid="api-reference">API reference</a>` : null}
          ${apiKey.get() ? html`<button type="button" onClick=${signOut} data-testid="forget-key">Forget key</button>` : null}
          <span class="muted small" title="The variant mount the console reads">${env.mount.variant} ${env.mount.path}</span>
        </div>
      </header>
      <main>
        <${View} key=${page.id} params=${route.params} />
      </main>
    <//>
  `;
}

const root = document.getElementById("root");
// The "Loading" placeholder is static HTML; preact renders beside existing children, not over them.
root.replaceChildren();
render(html`<${App} />`, root);
