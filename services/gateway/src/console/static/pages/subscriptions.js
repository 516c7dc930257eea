import { useState } from "preact/hooks";
import { Note, Section, Short, show, Table, ToneBadge } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { routeHref, useAction, useLoad, useShell } from "../state.js";
import { AlertUrlForm, CreateForm, ReplayForm, RowActions } from "./subscription-actions.js";

/** Each state of admin/subscriptionStates: its tone and what it tells an operator. */
const STATES = {
  delivering: ["ok", "events waiting, nothing failed"],
  "caught-up": ["ok", "nothing waiting"],
  live: ["ok", "a connected STOMP or MQTT client"],
  retrying: ["warn", "the last attempt failed; retried at the next attempt time"],
  suspended: ["bad", "dead-lettered: nothing is sent until a replay"],
  paused: ["idle", "paused by an operator"],
};

/** The state cell: the badge, with the next attempt while retrying; a dead letter links to its page. */
function StateCell({ s, group }) {
  const [tone, meaning] = STATES[s.state] ?? ["idle", ""];
  const badge = html`<${ToneBadge} tone=${tone} text=${s.state.replace("-", " ")} title=${meaning} />`;
  if (s.state === "suspended") return html`<a href=${routeHref("dead-letters", { group })}>${badge}</a>`;
  if (s.state === "retrying")
    return html`${badge} <span class="small muted" data-testid="next-attempt">next ${s.nextAttemptTimeStamp?.slice(11) ?? "—"}</span>`;
  return badge;
}

/**
 * Live subscriptions of the group with where their delivery truly stands (admin/subscriptionStates:
 * read from the rows, so a receiver failing for minutes shows as retrying, not delivering), and the
 * actions on them: subscribe, unsubscribe, send a test event, replay from a time or an event, set
 * or clear the alert URL (shown, like the callback URL, as the gateway redacts it).
 */
export function Subscriptions({ params }) {
  const { group, features } = useShell();
  const list = useLoad((signal) => q.subscriptions(group, signal), ["subscriptions", group]);
  const action = useAction();
  const [replaying, setReplaying] = useState(null);
  const [alerting, setAlerting] = useState(null);
  const columns = [
    { key: "subscriptionId", label: "Subscription", render: (s) => html`<${Short} text=${s.subscriptionId} keep=${8} />` },
    { key: "topicName", label: "Topic", className: "mono" },
    { key: "url", label: "Callback", className: "mono wrap" },
    {
      key: "alertUrl",
      label: "Alerts to",
      className: "mono wrap",
      render: (s) => (s.state === "live" ? show(null) : (s.alertUrl ?? html`<span class="muted">none</span>`)),
    },
    { key: "state", label: "State", render: (s) => html`<${StateCell} s=${s} group=${params.group} />` },
    { key: "lastError", label: "Last error", className: "wrap" },
    { key: "delivered", label: "Delivered", className: "num" },
    { key: "pending", label: "Waiting", className: "num" },
    // Never the creation time: a subscription that never delivered says so.
    { key: "lastDelivered", label: "Last delivery", render: (s) => s.lastDeliveredTimeStamp ?? html`<span class="muted">never</span>` },
    { key: "interfaceType", label: "Via" },
    { key: "nodeInstance", label: "Node", className: "mono", render: (s) => show(s.nodeInstance) },
    {
      key: "actions",
      label: "",
      render: (s) =>
        html`<${RowActions}
          s=${s}
          group=${params.group}
          action=${action}
          attempts=${features.attempts}
          onReplay=${setReplaying}
          onAlertUrl=${setAlerting}
        />`,
    },
  ];
  return html`
    <${Section}
      title="Subscriptions"
      state=${list}
      testId="subscriptions"
      actions=${html`<${CreateForm} action=${action} />`}
      render=${(rows) => html`
        <${Note} note=${action.note} />
        <p class="muted">${rows.length} subscription${rows.length === 1 ? "" : "s"} in group ${group}</p>
        <${Table} testId="subscription-table" rows=${rows} rowKey=${(s) => s.subscriptionId} columns=${columns} empty="No subscription in this group." />
        ${replaying ? html`<${ReplayForm} id=${replaying} action=${action} onClose=${() => setReplaying(null)} />` : null}
        ${alerting ? html`<${AlertUrlForm} id=${alerting} action=${action} onClose=${() => setAlerting(null)} />` : null}
      `}
    />
  `;
}
