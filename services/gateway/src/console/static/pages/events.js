import { Pager, Section, Short, Table } from "../components.js";
import { html } from "../html.js";
import { decodeContent } from "../payload-view.js";
import * as q from "../queries.js";
import { go, routeHref, useLoad, useShell } from "../state.js";
import { EventDetail } from "./event-detail.js";

const PAGE_SIZE = 20;
/** Without a topic, an eventId or a time range, the page lists the last hour's events. */
const DEFAULT_WINDOW_MS = 60 * 60 * 1000;

/** A `datetime-local` value (local time, no zone) as epoch ms; undefined when empty or invalid. */
function epochOf(local) {
  const ms = local ? new Date(local).getTime() : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** What admin/events is asked: the route's fields, with the last hour when nothing bounds the search. */
function searchOf(params, now) {
  const search = {
    topic: params.topic || undefined,
    eventId: params.eventId || undefined,
    from: epochOf(params.from),
    to: epochOf(params.to),
  };
  if (!search.topic && !search.eventId && (search.from === undefined || search.to === undefined)) {
    search.to ??= now;
    search.from ??= search.to - DEFAULT_WINDOW_MS;
  }
  return search;
}

/**
 * The group's events, newest first: searched by topic or `+`/`#` pattern, eventId and seal-time
 * range (admin/events), a page at a time; the event picked is shown below with its payload and
 * deliveries (event-detail.js).
 */
export function Events({ params }) {
  const { group } = useShell();
  const page = Math.max(1, Number(params.page) || 1);
  const fields = { topic: params.topic, eventId: params.eventId, from: params.from, to: params.to };
  const list = useLoad((signal) => q.events(group, searchOf(fields, Date.now()), page, PAGE_SIZE, signal), ["events", group, fields, page]);
  const onSubmit = (e) => {
    e.preventDefault();
    const form = Object.fromEntries(new FormData(e.currentTarget));
    go("events", { group: params.group, ...form });
  };
  const bounded = fields.topic || fields.eventId || (fields.from && fields.to);
  return html`
    <${Section}
      title="Events"
      state=${list}
      testId="events"
      actions=${html`
        <form class="inline wrap" onSubmit=${onSubmit} data-testid="event-search">
          <label>Topic or pattern <input name="topic" size="18" value=${fields.topic ?? ""} placeholder="shop/+/paid" /></label>
          <label>Event id <input name="eventId" size="14" value=${fields.eventId ?? ""} /></label>
          <label>From <input name="from" type="datetime-local" step="1" value=${fields.from ?? ""} /></label>
          <label>To <input name="to" type="datetime-local" step="1" value=${fields.to ?? ""} /></label>
          <button type="submit" class="primary">Search</button>
        </form>
      `}
      render=${(d) => html`
        <p class="muted">
          ${d.total}${d.total >= 10000 ? "+" : ""} event${d.total === 1 ? "" : "s"} in group ${group}${bounded ? "" : " sealed in the last hour"}
        </p>
        <${Table}
          testId="event-table"
          rows=${d.pageData}
          rowKey=${(ev) => ev.eventId}
          empty="No event matches."
          columns=${[
            {
              key: "eventId",
              label: "Event",
              render: (ev) => html`<a href=${routeHref("events", { ...params, event: ev.eventId })} class="mono">${ev.eventId}</a>`,
            },
            { key: "topic", label: "Topic", className: "mono" },
            { key: "blockNumber", label: "Block", className: "num" },
            { key: "eventTimeStamp", label: "Sealed" },
            {
              key: "content",
              label: "Content",
              className: "mono",
              render: (ev) => html`<${Short} text=${decodeContent(ev.content)} keep=${24} />`,
            },
          ]}
        />
        <${Pager} page=${page} pages=${Math.ceil(Math.min(d.total, 10000) / PAGE_SIZE)} onPage=${(p) => go("events", { ...params, page: p })} />
      `}
    />
    ${params.event ? html`<${EventDetail} key=${params.event} eventId=${params.event} />` : null}
  `;
}
