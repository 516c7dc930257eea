import { Badge, Pager, Section, Table } from "../components.js";
import { html } from "../html.js";
import * as q from "../queries.js";
import { go, useLoad, useShell } from "../state.js";

const ATTEMPT_PAGE = 20;

/** The columns of admin/deliveryAttempts' records; keys beyond these are shown after them as they come. */
const ATTEMPT_COLUMNS = [
  { key: "attemptTimeStamp", label: "When" },
  { key: "eventId", label: "Event", className: "mono" },
  { key: "delivered", label: "Result", render: (a) => html`<${Badge} ok=${a.delivered === true} yes="delivered" no="failed" />` },
  { key: "httpStatus", label: "HTTP", className: "num" },
  { key: "durationMs", label: "ms", className: "num" },
  { key: "error", label: "Error", className: "wrap" },
  { key: "excerpt", label: "Answer", className: "mono wrap" },
];
const HIDDEN = new Set(["attemptTime"]);

/** The recorded delivery attempts of one subscription, newest first, when this gateway records them. */
export function Attempts({ params }) {
  const { group } = useShell();
  const id = params.subscription ?? "";
  const page = Math.max(1, Number(params.page) || 1);
  const list = useLoad((signal) => q.attempts(id, page, ATTEMPT_PAGE, signal), ["attempts", group, id, page]);
  return html`
    <${Section}
      title="Delivery attempts"
      state=${list}
      testId="attempts"
      render=${(d) => {
        const rows = d.pageData ?? [];
        const known = new Set(ATTEMPT_COLUMNS.map((c) => c.key));
        const extra = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => !known.has(k) && !HIDDEN.has(k));
        const columns = [...ATTEMPT_COLUMNS, ...extra.map((k) => ({ key: k, label: k }))];
        return html`
          <p class="muted">Subscription <span class="mono">${id}</span>: ${d.total} attempt${d.total === 1 ? "" : "s"} recorded</p>
          <${Table} testId="attempt-table" rows=${rows} columns=${columns} empty="No attempt recorded for this subscription." />
          <${Pager} page=${page} pages=${Math.ceil(d.total / ATTEMPT_PAGE)} onPage=${(p) => go("attempts", { ...params, page: p })} />
        `;
      }}
    />
  `;
}
