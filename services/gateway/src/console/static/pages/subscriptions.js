import { useState } from "preact/hooks";
import { Badge, Pager, Section, Short, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { go, routeHref, useLoad, useShell } from "../state.js";

/** Live subscriptions of the group with their delivery counters. */
export function Subscriptions({ params }) {
  const { group, features } = useShell();
  const list = useLoad((signal) => q.subscriptions(group, signal), ["subscriptions", group]);
  const columns = [
    { key: "subscribeId", label: "Subscription", render: (s) => html`<${Short} text=${s.subscribeId} keep=${8} />` },
    { key: "topicName", label: "Topic", className: "mono" },
    { key: "notifiedEventCount", label: "Delivered", className: "num" },
    { key: "notifyingEventCount", label: "Waiting", className: "num" },
    { key: "notifyTimeStamp", label: "Last delivery" },
    {
      key: "dead",
      label: "State",
      render: (s) =>
        s.dead
          ? html`<a href=${routeHref("dead-letters", { group: params.group })}><${Badge} ok=${false} no="dead letter" /></a>`
          : html`<${Badge} ok=${true} yes="delivering" />`,
    },
    { key: "interfaceType", label: "Via" },
    { key: "node", label: "Node", className: "mono" },
  ];
  if (features.attempts) {
    columns.push({
      key: "attempts",
      label: "",
      render: (s) => html`<a href=${routeHref("attempts", { group: params.group, subscription: s.subscribeId })}>attempts</a>`,
    });
  }
  return html`
    <${Section}
      title="Subscriptions"
      state=${list}
      testId="subscriptions"
      render=${(rows) => html`
        <p class="muted">${rows.length} subscription${rows.length === 1 ? "" : "s"} in group ${group}</p>
        <${Table} testId="subscription-table" rows=${rows} rowKey=${(s) => s.subscribeId} columns=${columns} empty="No subscription in this group." />
      `}
    />
  `;
}

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

const ATTEMPT_PAGE = 20;

/** The columns of admin/deliveryAttempts' records; keys beyond these are shown after them as they come. */
const ATTEMPT_COLUMNS = [
  { key: "attemptTimeStamp", label: "When" },
  { key: "eventId", label: "Event", className: "mono" },
  { key: "delivered", label: "Result", render: (a) => html`<${Badge} ok=${a.delivered === true} yes="delivered" no="failed" />` },
  { key: "httpStatus", label: "HTTP", className: "num" },
  { key: "durationMs", label: "ms", className: "num" },
  { key: "error", label: "Error", className: "wrap" },
  { key: "excerpt", label: "Answer", className: "mono wrap" },
];
const HIDDEN = new Set(["attemptTime"]);

/** The recorded delivery attempts of one subscription, newest first, when this gateway records them. */
export function Attempts({ params }) {
  const { group } = useShell();
  const id = params.subscription ?? "";
  const page = Math.max(1, Number(params.page) || 1);
  const list = useLoad((signal) => q.attempts(id, page, ATTEMPT_PAGE, signal), ["attempts", group, id, page]);
  return html`
    <${Section}
      title="Delivery attempts"
      state=${list}
      testId="attempts"
      render=${(d) => {
        const rows = d.pageData ?? [];
        const known = new Set(ATTEMPT_COLUMNS.map((c) => c.key));
        const extra = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => !known.has(k) && !HIDDEN.has(k));
        const columns = [...ATTEMPT_COLUMNS, ...extra.map((k) => ({ key: k, label: k }))];
        return html`
          <p class="muted">Subscription <span class="mono">${id}</span>: ${d.total} attempt${d.total === 1 ? "" : "s"} recorded</p>
          <${Table} testId="attempt-table" rows=${rows} columns=${columns} empty="No attempt recorded for this subscription." />
          <${Pager} page=${page} pages=${Math.ceil(d.total / ATTEMPT_PAGE)} onPage=${(p) => go("attempts", { ...params, page: p })} />
        `;
      }}
    />
  `;
}
