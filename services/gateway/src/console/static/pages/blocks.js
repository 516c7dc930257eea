import { Pager, Section, Short, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { go, routeHref, useLoad, useShell } from "../state.js";

const PAGE_SIZE = 20;

/**
 * The group's blocks, newest first. blockList counts its pages from block 1 (page n holds heights
 * (n−1)·size+1 … n·size), so the console's page 1 is blockList's last page.
 */
export function Blocks({ params }) {
  const { group } = useShell();
  const page = Math.max(1, Number(params.page) || 1);
  const list = useLoad(
    async (signal) => {
      const { latestBlock } = await q.general(group, signal);
      const pages = Math.max(1, Math.ceil(latestBlock / PAGE_SIZE));
      const shown = Math.min(page, pages);
      const d = await q.blocks(group, pages - shown + 1, PAGE_SIZE, signal);
      return { latestBlock, pages, shown, rows: d.pageData };
    },
    ["blocks", group, page],
  );
  return html`
    <${Section}
      title="Blocks"
      state=${list}
      testId="blocks"
      render=${(d) => html`
        <p class="muted">Height ${d.latestBlock} in group ${group}</p>
        <${Table}
          testId="block-table"
          rows=${d.rows}
          rowKey=${(b) => String(b.blockNumber)}
          empty="No block is sealed yet."
          columns=${[
            {
              key: "blockNumber",
              label: "Height",
              className: "num",
              render: (b) => html`<a href=${routeHref("transactions", { group: params.group, block: b.blockNumber })}>${b.blockNumber}</a>`,
            },
            { key: "pkHash", label: "Hash", render: (b) => html`<${Short} text=${b.pkHash} />` },
            { key: "transCount", label: "Transactions", className: "num" },
            { key: "sealer", label: "Sealer", render: (b) => html`<${Short} text=${b.sealer} keep=${8} />` },
            { key: "blockTimestamp", label: "Sealed" },
          ]}
        />
        <${Pager} page=${d.shown} pages=${d.pages} onPage=${(p) => go("blocks", { ...params, page: p })} />
      `}
    />
  `;
}

/** One block's transactions a page at a time; the latest block's when none is named. */
export function Transactions({ params }) {
  const { group } = useShell();
  const page = Math.max(1, Number(params.page) || 1);
  const block = params.block && /^\d+$/.test(params.block) ? Number(params.block) : undefined;
  const list = useLoad((signal) => q.transactions(group, block, page, PAGE_SIZE, signal), ["transactions", group, block, page]);
  const onSubmit = (e) => {
    e.preventDefault();
    const value = new FormData(e.currentTarget).get("block");
    go("transactions", { group: params.group, block: String(value).trim() });
  };
  return html`
    <${Section}
      title=${block === undefined ? "Transactions of the latest block" : `Transactions of block ${block}`}
      state=${list}
      testId="transactions"
      actions=${html`
        <form class="inline" onSubmit=${onSubmit}>
          <label>Block <input name="block" inputmode="numeric" size="8" value=${block ?? ""} placeholder="latest" /></label>
          <button type="submit">Show</button>
        </form>
      `}
      render=${(d) =>
        d === null
          ? html`<p class="empty">This block does not exist or holds no transaction.</p>`
          : html`
              <div class="section-head">
                <p class="muted">${d.total} transaction${d.total === 1 ? "" : "s"}</p>
                <${BlockSteps} group=${params.group} height=${d.pageData[0]?.blockNumber} />
              </div>
              <${Table}
                testId="transaction-table"
                rows=${d.pageData}
                rowKey=${(t) => t.transHash}
                columns=${[
                  { key: "transHash", label: "Hash", render: (t) => html`<${Short} text=${t.transHash} />` },
                  { key: "transFrom", label: "From", render: (t) => html`<${Short} text=${t.transFrom} keep=${8} />` },
                  { key: "transTo", label: "To", render: (t) => html`<${Short} text=${t.transTo} keep=${8} />` },
                  { key: "blockNumber", label: "Block", className: "num" },
                  { key: "blockTimestamp", label: "Time" },
                ]}
              />
              <${Pager} page=${page} pages=${Math.ceil(d.total / PAGE_SIZE)} onPage=${(p) => go("transactions", { ...params, page: p })} />
            `}
    />
  `;
}

/** Links to the block before and after the one shown. */
function BlockSteps({ group, height }) {
  if (typeof height !== "number") return null;
  return html`
    <div class="pager">
      ${height > 1 ? html`<a href=${routeHref("transactions", { group, block: height - 1 })} data-testid="older-block">‹ Block ${height - 1}</a>` : null}
      <a href=${routeHref("transactions", { group, block: height + 1 })} data-testid="newer-block">Block ${height + 1} ›</a>
    </div>
  `;
}
