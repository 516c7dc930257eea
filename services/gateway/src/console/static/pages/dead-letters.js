import { useState } from "preact/hooks";
import { Section, Short, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { routeHref, useLoad, useShell } from "../state.js";

/**
 * Subscriptions whose head event used up its retries: delivery is suspended with the backlog kept
 * in order. Replay gives the head event fresh retries; the backlog then drains in order.
 */
export function DeadLetters({ params }) {
  const { group, features, refresh } = useShell();
  const list = useLoad((signal) => q.deadLetters(group, signal), ["dead", group]);
  const [busy, setBusy] = useState(null);
  const [note, setNote] = useState(null);
  const replay = async (id) => {
    setBusy(id ?? "all");
    setNote(null);
    try {
      const released = await q.replay(id);
      setNote({ ok: true, text: released.length ? `Replayed ${released.join(", ")}` : "Nothing to replay." });
    } catch (err) {
      setNote({ ok: false, text: `Replay failed: ${err.message}` });
    } finally {
      setBusy(null);
      refresh();
    }
  };
  const columns = [
    { key: "subscriptionId", label: "Subscription", render: (d) => html`<${Short} text=${d.subscriptionId} keep=${8} />` },
    { key: "topicName", label: "Topic", className: "mono" },
    { key: "url", label: "Callback", className: "mono wrap" },
    { key: "eventId", label: "Head event", className: "mono" },
    { key: "attempts", label: "Attempts", className: "num" },
    { key: "lastError", label: "Last error", className: "wrap" },
    { key: "notifyingEventCount", label: "Waiting", className: "num" },
    { key: "deadTimeStamp", label: "Since" },
    {
      key: "actions",
      label: "",
      render: (d) => html`
        ${features.attempts ? html`<a href=${routeHref("attempts", { group: params.group, subscription: d.subscriptionId })}>attempts</a> ` : null}
        <button type="button" class="primary" disabled=${busy !== null} onClick=${() => replay(d.subscriptionId)} data-testid="replay">
          ${busy === d.subscriptionId ? "Replaying…" : "Replay"}
        </button>
      `,
    },
  ];
  return html`
    <${Section}
      title="Dead letters"
      state=${list}
      testId="dead-letters"
      actions=${
        list.data?.length > 1
          ? html`<button type="button" disabled=${busy !== null} onClick=${() => replay(null)} data-testid="replay-all">Replay all</button>`
          : null
      }
      render=${(rows) => html`
        ${note ? html`<p class=${note.ok ? "notice" : "error"} role="status" data-testid="replay-note">${note.text}</p>` : null}
        <${Table}
          testId="dead-letter-table"
          rows=${rows}
          rowKey=${(d) => d.subscriptionId}
          columns=${columns}
          empty="No dead letters: every subscription is being delivered."
        />
      `}
    />
  `;
}
