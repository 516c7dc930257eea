import { fetchMetrics } from "../api.js";
import { counterTotals, RateChart, record } from "../charts.js";
import { Badge, Section, Short, Stat, show, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { routeHref, useLoad, useShell } from "../state.js";

/** Groups, the selected group's height, transactions and nodes, the gateways, and the rate charts. */
export function Overview() {
  const { group, groups } = useShell();
  const summary = useLoad(
    async (signal) => {
      const [general, gateways, chainNodes, version] = await Promise.all([
        q.general(group, signal),
        q.gateways(signal),
        q.chainNodes(group, signal),
        q.version(signal),
      ]);
      return { general, gateways, chainNodes, version };
    },
    ["overview", group],
  );
  // The groups were read at start: every group's summary goes in the same batch as the rest.
  const allGroups = useLoad(
    (signal) => Promise.all(groups.map(async (id) => ({ id, ...(await q.general(id, signal)) }))),
    ["groups", groups],
  );

  return html`
    <${Section}
      title=${`Group ${group}`}
      state=${summary}
      testId="overview"
      render=${(d) => html`
        <div class="stats">
          <${Stat} label="Chain height" value=${d.general.latestBlock} testId="stat-height" />
          <${Stat} label="Transactions" value=${d.general.transactionCount} testId="stat-transactions" />
          <${Stat} label="Chain nodes" value=${d.general.nodeCount} testId="stat-nodes" />
          <${Stat} label="Gateways" value=${d.gateways.length} testId="stat-gateways" />
        </div>
        <${Rates} />
        <h3>Chain nodes (indexers)</h3>
        <${Table}
          testId="chain-nodes"
          rows=${d.chainNodes}
          rowKey=${(n) => n.nodeId}
          empty="No indexer of this group is registered."
          columns=${[
            { key: "nodeId", label: "Node", render: (n) => html`<${Short} text=${n.nodeId} />` },
            { key: "nodeType", label: "Type" },
            { key: "blockNumber", label: "Height", className: "num" },
            { key: "nodeActive", label: "State", render: (n) => html`<${Badge} ok=${n.nodeActive === 1} />` },
          ]}
        />
        <h3>Gateways</h3>
        <${Table}
          testId="gateways"
          rows=${d.gateways.map((address) => ({ address }))}
          rowKey=${(g) => g.address}
          columns=${[
            { key: "address", label: "Address", className: "mono" },
            // listNodes names only gateways whose heartbeat is current.
            { key: "state", label: "State", render: () => html`<${Badge} ok=${true} />` },
          ]}
        />
        <p class="muted small">
          Version ${show(d.version.eventVersion)} · ${show(d.version.gitBranch)} ${show(d.version.gitCommitHash)}
        </p>
      `}
    />
    <${Section}
      title="All groups"
      state=${allGroups}
      testId="groups"
      render=${(rows) => html`
        <${Table}
          testId="group-table"
          rows=${rows}
          rowKey=${(g) => g.id}
          columns=${[
            { key: "id", label: "Group", render: (g) => html`<a href=${routeHref("blocks", { group: g.id })}>${g.id}</a>` },
            { key: "latestBlock", label: "Height", className: "num" },
            { key: "transactionCount", label: "Transactions", className: "num" },
            { key: "nodeCount", label: "Chain nodes", className: "num" },
          ]}
        />
      `}
    />
  `;
}

/**
 * Rates of the group, always: events sealed (the ledger's transaction count) and callbacks
 * delivered (the sum of the subscriptions' delivered counters), both for the whole cluster. When
 * the gateway has /metrics: the publishes this gateway answered (not its requests: the console's
 * own polling would be most of them).
 */
function Rates() {
  const { group, features } = useShell();
  const rates = useLoad(
    async (signal) => {
      const at = Date.now();
      const [general, subs, text] = await Promise.all([
        q.general(group, signal),
        q.subscriptions(group, signal),
        features.metrics ? fetchMetrics(signal) : null,
      ]);
      const series = [
        { kind: "sealed", label: "Events sealed / s", source: "ledger", value: general.transactionCount },
        {
          kind: "delivered",
          label: "Callbacks delivered / s",
          source: "subscription counters",
          value: subs.reduce((n, s) => n + s.delivered, 0),
        },
      ];
      const totals = text ? counterTotals(text) : new Map();
      for (const [kind, name, label] of METRIC_SERIES) {
        if (totals.has(name)) series.push({ kind, label, source: `this gateway's ${name}`, value: totals.get(name) });
      }
      return series.map((s) => ({ ...s, points: record(`${s.kind}:${group}`, s.value, at) }));
    },
    ["rates", group],
  );
  if (!rates.data) return null;
  return html`<div class="charts" data-testid="rates">${rates.data.map((s) => html`<${RateChart} key=${s.kind} ...${s} />`)}</div>`;
}

/** Counters of the gateway's /metrics the overview charts, when present: [kind, name, label]. */
const METRIC_SERIES = [["gateway-publishes", "evb_publish_total", "Publishes answered / s"]];
