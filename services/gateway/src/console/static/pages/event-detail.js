import { Note, Section, show, Table, ToneBadge } from "../components.js";
import { html } from "../html.js";
import { PayloadView } from "../payload-view.js";
import * as q from "../queries.js";
import { useAction, useLoad, useShell } from "../state.js";

/** admin/eventDeliveries' states, in the colour of what they mean for the receiver. */
const DELIVERY_TONES = { delivered: "ok", pending: "warn", "dead-lettered": "bad", "before-start": "idle" };

/** One event: its facts, its payload (text / JSON / Base64), and per matching subscription its delivery, every attempt and a Resend. */
export function EventDetail({ eventId }) {
  const { group } = useShell();
  const event = useLoad(
    async (signal) => (await q.events(group, { eventId }, 1, 1, signal)).pageData[0] ?? null,
    ["event", group, eventId],
  );
  return html`
    <${Section}
      title=${`Event ${eventId}`}
      state=${event}
      testId="event-detail"
      render=${(ev) =>
        ev === null
          ? html`<p class="empty">No such event in group ${group}.</p>`
          : html`
              <dl class="facts">
                <dt>Topic</dt><dd data-key="topic">${ev.topic}</dd>
                <dt>Block</dt><dd data-key="blockNumber">${ev.blockNumber}</dd>
                <dt>Sealed</dt><dd data-key="eventTimeStamp">${ev.eventTimeStamp}</dd>
                <dt>Extensions</dt><dd data-key="extensions">${show(ev.extensions)}</dd>
              </dl>
              <${PayloadView} content=${ev.content} />
            `}
    />
    <${Deliveries} eventId=${eventId} />
  `;
}

/** The event's deliveries per subscription, with every attempt the log keeps and a Resend button each. */
function Deliveries({ eventId }) {
  const { group } = useShell();
  const list = useLoad((signal) => q.eventDeliveries(group, eventId, signal), ["deliveries", group, eventId]);
  const { busy, note, run } = useAction();
  const resend = (id) =>
    run(
      `Resend to ${id}`,
      () => q.resend(id, eventId),
      (r) => `Resend ${r.resend} of ${eventId} to ${id} asked for`,
    );
  const columns = [
    { key: "subscriptionId", label: "Subscription", className: "mono" },
    { key: "topicName", label: "Topic", className: "mono" },
    { key: "url", label: "Callback", className: "mono wrap" },
    { key: "state", label: "State", render: (d) => html`<${ToneBadge} tone=${DELIVERY_TONES[d.state] ?? "idle"} text=${d.state} />` },
    { key: "attemptCount", label: "Attempts", className: "num", render: (d) => d.attempts.length },
    { key: "resendsWaiting", label: "Resends waiting", className: "num" },
    {
      key: "actions",
      label: "",
      render: (d) => html`
        <button type="button" disabled=${busy !== null} onClick=${() => resend(d.subscriptionId)} data-testid="resend">
          ${busy === `Resend to ${d.subscriptionId}` ? "Resending…" : "Resend"}
        </button>
      `,
    },
  ];
  return html`
    <${Section}
      title="Deliveries"
      state=${list}
      testId="event-deliveries"
      render=${(d) => {
        const attempts = d.pageData.flatMap((s) => s.attempts.map((a) => ({ ...a, subscriptionId: s.subscriptionId })));
        return html`
          <${Note} note=${note} />
          <${Table} testId="delivery-table" rows=${d.pageData} rowKey=${(s) => s.subscriptionId} columns=${columns} empty="No live subscription matches this event." />
          <h3>Attempts</h3>
          <${Table}
            testId="event-attempt-table"
            rows=${attempts}
            empty="No attempt at this event is recorded."
            columns=${[
              { key: "attemptTimeStamp", label: "When" },
              { key: "subscriptionId", label: "Subscription", className: "mono" },
              {
                key: "delivered",
                label: "Result",
                render: (a) => html`<${ToneBadge} tone=${a.delivered ? "ok" : "bad"} text=${a.delivered ? "delivered" : "failed"} />`,
              },
              { key: "httpStatus", label: "HTTP", className: "num" },
              { key: "durationMs", label: "ms", className: "num" },
              { key: "error", label: "Error", className: "wrap" },
              { key: "excerpt", label: "Answer", className: "mono wrap" },
            ]}
          />
        `;
      }}
    />
  `;
}
