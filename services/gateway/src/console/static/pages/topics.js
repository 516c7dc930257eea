import { Pager, Section, Short, show, Table, when } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { go, routeHref, useLoad, useShell } from "../state.js";

const PAGE_SIZE = 20;

/** The group's topics a page at a time, and the state of the one picked. */
export function Topics({ params }) {
  const { group } = useShell();
  const page = Math.max(1, Number(params.page) || 1);
  const list = useLoad((signal) => q.topics(group, page - 1, PAGE_SIZE, signal), ["topics", group, page]);
  return html`
    <${Section}
      title="Topics"
      state=${list}
      testId="topics"
      render=${(d) => html`
        <p class="muted">${d.total} topic${d.total === 1 ? "" : "s"} in group ${group}</p>
        <${Table}
          testId="topic-table"
          rows=${d.topicInfoList}
          rowKey=${(t) => t.topicName}
          empty="No topic is open in this group."
          columns=${[
            {
              key: "topicName",
              label: "Topic",
              render: (t) => html`<a href=${routeHref("topics", { ...params, topic: t.topicName })} class="mono">${t.topicName}</a>`,
            },
            { key: "sequenceNumber", label: "Events", className: "num" },
            { key: "blockNumber", label: "Last block", className: "num" },
            { key: "senderAddress", label: "Opened by", render: (t) => html`<${Short} text=${t.senderAddress} keep=${8} />` },
            { key: "createdTimestamp", label: "Opened", render: (t) => when(t.createdTimestamp) },
          ]}
        />
        <${Pager} page=${page} pages=${Math.ceil(d.total / PAGE_SIZE)} onPage=${(p) => go("topics", { ...params, page: p })} />
      `}
    />
    ${params.topic ? html`<${TopicState} topic=${params.topic} />` : null}
  `;
}

function TopicState({ topic }) {
  const { group } = useShell();
  const state = useLoad((signal) => q.topicState(group, topic, signal), ["state", group, topic]);
  return html`
    <${Section}
      title=${`State of ${topic}`}
      state=${state}
      testId="topic-state"
      render=${(s) => html`
        <dl class="facts">
          ${Object.entries(s).map(([k, v]) => html`<dt>${k}</dt><dd data-key=${k}>${k === "createdTimestamp" || k === "lastTimestamp" ? when(v) : show(v)}</dd>`)}
        </dl>
      `}
    />
  `;
}
