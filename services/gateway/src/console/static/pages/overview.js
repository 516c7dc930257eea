import { fetchMetrics } from "../api.js";
import { RateChart, sample } from "../charts.js";
import { Badge, Section, Short, Stat, show, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { routeHref, useLoad, useShell } from "../state.js";

/** Groups, the selected group's height, transactions and nodes, the gateways, and the rate charts. */
export function Overview() {
  const { group, features } = useShell();
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
  const allGroups = useLoad(
    async (signal) => {
      const ids = await q.groups(signal);
      return Promise.all(ids.map(async (id) => ({ id, ...(await q.general(id, signal)) })));
    },
    ["groups"],
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
        ${features.metrics ? html`<${Rates} />` : null}
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

/** The publish and delivery rate charts, sampled from /metrics on every refresh. */
function Rates() {
  const rates = useLoad(
    async (signal) => {
      const text = await fetchMetrics(signal);
      return text === null ? [] : sample(text);
    },
    ["metrics"],
  );
  const series = (rates.data ?? []).filter((s) => s.name);
  if (series.length === 0) return null;
  return html`<div class="charts" data-testid="rates">${series.map((s) => html`<${RateChart} key=${s.id} ...${s} />`)}</div>`;
}
