import { RateChart, rates, record, seed } from "../charts.js";
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

/** Per group: the newest history sample read so far (gateway clock), once its history is loaded. */
const historyRead = new Map();

/**
 * The group's history samples since the last read (the whole hour the first time), with their
 * times moved to this browser's clock (the gateway's `now` against ours); null when the gateway
 * has no history to give (no such operation, or it failed).
 */
async function newHistory(group, signal) {
  const since = historyRead.get(group);
  const h = await q.metricsHistory(group, since === undefined ? undefined : since + 1, signal).catch((err) => {
    if (signal.aborted) throw err;
    return null;
  });
  if (!h) return null;
  const shift = Date.now() - h.now;
  const first = since === undefined && h.available;
  return {
    first,
    // Where the next read starts; set once the samples are charted (a load may be abandoned before).
    read: h.samples.at(-1)?.at ?? (first ? h.now - h.intervalMs : since),
    samples: h.samples.map((s) => ({ ...s, at: s.at + shift })),
    intervalMs: h.intervalMs,
  };
}

/**
 * Rates of the group for the whole cluster: events sealed (the ledger's transaction count),
 * callbacks delivered (the sum of the subscriptions' delivered counters) and publishes answered by
 * every gateway. When a chart opens it starts with the hour before, from the gateways' history
 * (admin/metricsHistory); then the page's own samples of each refresh follow for the first two,
 * and the history's newer samples for publishes (counted in the gateways only).
 */
function Rates() {
  const { group } = useShell();
  const charts = useLoad(
    async (signal) => {
      const at = Date.now();
      const [general, subs, past] = await Promise.all([
        q.general(group, signal),
        q.subscriptions(group, signal),
        newHistory(group, signal),
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
      if (past?.first)
        for (const s of series)
          seed(
            `${s.kind}:${group}`,
            past.samples.map((p) => ({ at: p.at, value: p[s.kind] })),
          );
      const shown = series.map((s) => ({ ...s, points: record(`${s.kind}:${group}`, s.value, at) }));
      if (past) {
        for (const p of past.samples) record(`publishes:${group}`, p.publishes, p.at);
        const points = rates(`publishes:${group}`);
        if (past.read !== undefined) historyRead.set(group, past.read);
        const source = `every gateway, sampled each ${past.intervalMs / 1000} s`;
        shown.push({ kind: "publishes", label: "Publishes answered / s", source, value: past.samples.at(-1)?.publishes, points });
      }
      return shown;
    },
    ["rates", group],
  );
  if (!charts.data) return null;
  return html`<div class="charts" data-testid="rates">${charts.data.map((s) => html`<${RateChart} key=${s.kind} ...${s} />`)}</div>`;
}
