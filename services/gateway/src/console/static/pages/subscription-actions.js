import { useState } from "preact/hooks";
import { html } from "../html.js";
import * as q from "../queries.js";
import { routeHref, useShell } from "../state.js";

/** Whether a subscription's topic is a pattern (`+`/`#`): a test event needs one topic to go to. */
const isPattern = (topic) => /[+#]/.test(topic);

/** The fields of a submitted form as an object of trimmed strings. */
const formFields = (e) => Object.fromEntries([...new FormData(e.currentTarget)].map(([k, v]) => [k, String(v).trim()]));

/** rest/subscribe: a topic or pattern, a callback URL and optionally an alert URL; the gateway checks the URLs before it answers. */
export function CreateForm({ action }) {
  const { group } = useShell();
  const onSubmit = (e) => {
    e.preventDefault();
    const { topic, url, alertUrl } = formFields(e);
    action.run(
      "Subscribe",
      () => q.subscribe(group, topic, url, alertUrl),
      (id) => `Subscribed ${id}`,
    );
  };
  return html`
    <form class="inline wrap" onSubmit=${onSubmit} data-testid="subscribe-form">
      <label>Topic <input name="topic" size="16" required placeholder="shop/+/paid" /></label>
      <label>Callback <input name="url" size="30" required placeholder="https://receiver.example/hook" /></label>
      <label title="Optional: signed alerts to the owner when the subscription fails, is suspended and recovers">
        Alerts to <input name="alertUrl" size="24" placeholder="optional: https://ops.example/alerts" />
      </label>
      <button type="submit" class="primary" disabled=${action.busy !== null}>Subscribe</button>
    </form>
  `;
}

/** A row's actions: attempts, a test event to its topic, replay (from a position; of a dead letter), pause/resume, a secret of its own, its alert URL, delete in two clicks. */
export function RowActions({ s, group, action, attempts, onReplay, onAlertUrl }) {
  const shell = useShell();
  const [confirming, setConfirming] = useState(false);
  if (s.state === "live") return null;
  const id = s.subscriptionId;
  const busy = action.busy !== null;
  const test = () =>
    action.run(
      "Test event",
      () => q.publish(shell.group, s.topicName, JSON.stringify({ test: true, subscriptionId: id, at: new Date().toISOString() })),
      (r) => `Test event ${r.eventId} published to ${s.topicName}`,
    );
  const release = () =>
    action.run(
      "Replay",
      () => q.replay(id),
      (ids) => (ids.length ? `Replayed ${ids.join(", ")}` : "Nothing to replay."),
    );
  const paused = s.state === "paused";
  const pauseOrResume = () =>
    action.run(
      paused ? "Resume" : "Pause",
      () => q.subscriptionSettings(id, { paused: paused ? "false" : "true" }),
      () => (paused ? `Resumed ${id}: its backlog goes out in order` : `Paused ${id}: nothing is sent until it is resumed`),
    );
  const rotate = () =>
    action.run(
      "Rotate secret",
      () => q.subscriptionSettings(id, { rotateSecret: "true" }),
      (r) => `New signing secret of ${id} (shown this once; the old one signs too for a day): ${r.secret}`,
    );
  const remove = () =>
    action.run(
      "Unsubscribe",
      () => q.unsubscribe(id),
      () => `Unsubscribed ${id}`,
    );
  return html`
    <span class="row-actions">
      ${attempts ? html`<a href=${routeHref("attempts", { group, subscription: id })}>attempts</a>` : null}
      <button type="button" disabled=${busy || isPattern(s.topicName)} title=${isPattern(s.topicName) ? "A pattern has no one topic to publish to" : `Publish a test event to ${s.topicName}`} onClick=${test} data-testid="test-event">
        Test event
      </button>
      ${s.state === "suspended" ? html`<button type="button" class="primary" disabled=${busy} onClick=${release} data-testid="replay">Replay</button>` : null}
      <button type="button" disabled=${busy} onClick=${() => onReplay(id)} data-testid="replay-from">Replay from…</button>
      <button type="button" disabled=${busy} onClick=${pauseOrResume} data-testid=${paused ? "resume" : "pause"}>${paused ? "Resume" : "Pause"}</button>
      <button type="button" disabled=${busy} onClick=${rotate} title="A signing secret of its own; the old one keeps signing for a day" data-testid="rotate-secret">Rotate secret</button>
      <button type="button" disabled=${busy} onClick=${() => onAlertUrl(id)} title="Where signed alerts to the owner go" data-testid="alert-url">Alert URL…</button>
      ${
        confirming
          ? html`<button type="button" class="danger" disabled=${busy} onClick=${remove} data-testid="confirm-delete">Really delete</button>`
          : html`<button type="button" disabled=${busy} onClick=${() => setConfirming(true)} data-testid="delete">Delete</button>`
      }
    </span>
  `;
}

/** Replay one subscription from a time or an event (admin/replayDeadLetters with fromTime or fromEventId): every later event is delivered again, in order. */
export function ReplayForm({ id, action, onClose }) {
  const onSubmit = (e) => {
    e.preventDefault();
    const { from, eventId } = formFields(e);
    const position = eventId ? { eventId } : { time: from ? new Date(from).getTime() : undefined };
    action
      .run(
        "Replay from",
        () => q.replayFrom(id, position),
        () => `Replaying ${id} from ${eventId ? `event ${eventId}` : from}`,
      )
      .then(onClose);
  };
  return html`
    <form class="inline wrap replay-form" onSubmit=${onSubmit} data-testid="replay-form">
      <strong>Replay <span class="mono">${id}</span> from</strong>
      <label>Time <input name="from" type="datetime-local" step="1" /></label>
      <span class="muted">or</span>
      <label>Event id <input name="eventId" size="16" /></label>
      <button type="submit" class="primary" disabled=${action.busy !== null}>Replay</button>
      <button type="button" onClick=${onClose}>Cancel</button>
    </form>
  `;
}

/**
 * Sets or clears a subscription's alert URL (admin/subscriptionSettings with alertUrl; blank: no
 * alerts). Never filled with the URL shown, which may be redacted: the owner types the whole one.
 */
export function AlertUrlForm({ id, action, onClose }) {
  const set = (alertUrl) =>
    action
      .run(
        alertUrl ? "Set alert URL" : "Clear alert URL",
        () => q.subscriptionSettings(id, { alertUrl }),
        () => (alertUrl ? `Alerts of ${id} go to the new URL` : `No alerts for ${id}`),
      )
      .then(onClose);
  const onSubmit = (e) => {
    e.preventDefault();
    set(formFields(e).alertUrl);
  };
  return html`
    <form class="inline wrap replay-form" onSubmit=${onSubmit} data-testid="alert-url-form">
      <strong>Alerts of <span class="mono">${id}</span> to</strong>
      <label>Alert URL <input name="alertUrl" size="36" required placeholder="https://ops.example/alerts" /></label>
      <button type="submit" class="primary" disabled=${action.busy !== null}>Set</button>
      <button type="button" disabled=${action.busy !== null} onClick=${() => set("")} data-testid="clear-alert-url">No alerts</button>
      <button type="button" onClick=${onClose}>Cancel</button>
    </form>
  `;
}
