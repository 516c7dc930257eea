import { Badge, Section, Short, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { routeHref, useLoad, useShell } from "../state.js";

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
