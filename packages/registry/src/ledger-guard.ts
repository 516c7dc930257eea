import type { Logger } from "@evb/domain";
import type { NodeRegistry } from "./node-registry.ts";

/** What the guard concluded from one look: the identity to remember, and why the ledger is refused (null: served). */
export interface LedgerJudgement {
  remembered: string | null;
  refusal: string | null;
}

/** What the indexers' heartbeats say about ledgers: those they matched (and can seal into), and those they refused as another deployment's. */
export interface LedgerReports {
  vouched: ReadonlySet<string>;
  foreign: ReadonlySet<string>;
}

/**
 * Whether the ledger in Postgres is the one this service has been serving (pure). The identity it
 * found at its start is remembered; another one is served only once an indexer that can seal
 * reports it as the ledger it matched (after rebuilding it from the chain topic). Until then
 * (a schema dropped and made again, being rebuilt; an older or another deployment's database
 * restored) answering from it would give acknowledged eventIds as missing or as other events.
 * A ledger an indexer refused as another deployment's is never served, even by a service that
 * started on it.
 */
export function judgeLedger(remembered: string | null, current: string, reports: LedgerReports): LedgerJudgement {
  if (reports.foreign.has(current) && !reports.vouched.has(current)) {
    return {
      remembered,
      refusal:
        `the ledger in Postgres (identity ${current}) was refused by an indexer as another deployment's: its blocks are not the ` +
        "ones this deployment's Kafka topics record (see docs/ledger.md)",
    };
  }
  if (remembered === null || current === remembered || reports.vouched.has(current)) return { remembered: current, refusal: null };
  return {
    remembered,
    refusal:
      `the ledger in Postgres (identity ${current}) is not the one this service served (${remembered}) and no indexer has ` +
      "matched it yet: a dropped schema being rebuilt from Kafka, or another deployment's database (see docs/ledger.md)",
  };
}

/** Nothing heard from the indexers (Redis did not answer): only the remembered ledger is served. */
const NO_REPORTS: LedgerReports = { vouched: new Set(), foreign: new Set() };

export interface LedgerGuardOptions {
  /** The ledger's identity; rejects when it cannot be read (code 42P01: its tables are gone). */
  readIdentity: () => Promise<string>;
  /** What the live indexers report about ledgers, over every group (`ledgerReports`). */
  reports: () => Promise<LedgerReports>;
  intervalMs: number;
  logger: Logger;
}

/**
 * What the live indexers of `groups` report in their heartbeats: the ledgers they matched and can
 * seal into (rebuilt from this deployment's Kafka topics), and those they refused as another's.
 */
export async function ledgerReports(registry: NodeRegistry, groups: readonly string[]): Promise<LedgerReports> {
  const nodes = (await Promise.all(groups.map((g) => registry.chainNodes(g)))).flat().filter((n) => n.active);
  return {
    vouched: new Set(nodes.flatMap((n) => (n.canSeal !== false && n.ledger ? [n.ledger] : []))),
    foreign: new Set(nodes.flatMap((n) => (n.foreignLedger ? [n.foreignLedger] : []))),
  };
}

/**
 * Keeps a gateway from answering, and a notifier from dispatching and delivering, out of a
 * ledger that is not the one it served: looks every
 * `intervalMs` (and at start) and says why not (`refusal()`). A Postgres that does not answer
 * changes nothing here (operations fail on their own); tables that are gone are refused at once.
 */
export class LedgerGuard {
  private readonly o: LedgerGuardOptions;
  private state: LedgerJudgement = { remembered: null, refusal: null };
  private timer?: NodeJS.Timeout;

  constructor(o: LedgerGuardOptions) {
    this.o = o;
  }

  async start(): Promise<void> {
    await this.look();
    this.timer = setInterval(() => void this.look(), this.o.intervalMs);
    this.timer.unref?.();
  }

  /** Why the ledger must not be answered from now; null while it may. */
  refusal(): string | null {
    return this.state.refusal;
  }

  async look(): Promise<void> {
    let next: LedgerJudgement;
    try {
      const current = await this.o.readIdentity();
      // Read every look, also for the ledger served: an indexer may refuse it as another's.
      const reports = await this.o.reports().catch(() => NO_REPORTS);
      next = judgeLedger(this.state.remembered, current, reports);
    } catch (err) {
      if ((err as { code?: unknown }).code !== "42P01") return;
      next = { ...this.state, refusal: "the ledger's tables are gone (its schema dropped?): nothing is answered from it until it is back" };
    }
    if (next.refusal !== null && this.state.refusal === null) this.o.logger.error({ reason: next.refusal }, "ledger refused");
    if (next.refusal === null && this.state.refusal !== null)
      this.o.logger.warn({ ledger: next.remembered }, "ledger served again (matched by an indexer)");
    this.state = next;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
