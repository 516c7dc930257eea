import type { Logger } from "@evb/domain";
import type { NodeRegistry } from "./node-registry.ts";

/** What the guard concluded from one look: the identity to remember, and why the ledger is refused (null: served). */
export interface LedgerJudgement {
  remembered: string | null;
  refusal: string | null;
}

/**
 * Whether the ledger in Postgres is the one this service has been serving (pure). The identity it
 * found at its start is remembered; another one is served only once an indexer that can seal
 * reports it as the ledger it matched (after rebuilding it from the chain topic). Until then
 * (a schema dropped and made again, being rebuilt; an older or another deployment's database
 * restored) answering from it would give acknowledged eventIds as missing or as other events.
 */
export function judgeLedger(remembered: string | null, current: string, vouched: ReadonlySet<string>): LedgerJudgement {
  if (remembered === null || current === remembered || vouched.has(current)) return { remembered: current, refusal: null };
  return {
    remembered,
    refusal:
      `the ledger in Postgres (identity ${current}) is not the one this service served (${remembered}) and no indexer has ` +
      "matched it yet: a dropped schema being rebuilt from Kafka, or another deployment's database (see docs/ledger.md)",
  };
}

export interface LedgerGuardOptions {
  /** The ledger's identity; rejects when it cannot be read (code 42P01: its tables are gone). */
  readIdentity: () => Promise<string>;
  /** The ledgers the indexers that can seal report they matched, over every group. */
  vouched: () => Promise<ReadonlySet<string>>;
  intervalMs: number;
  logger: Logger;
}

/**
 * The ledgers that the indexers able to seal report they matched (their heartbeats), over
 * `groups`: a ledger one of them vouches for was rebuilt from this deployment's Kafka topics.
 */
export async function vouchedLedgers(registry: NodeRegistry, groups: readonly string[]): Promise<Set<string>> {
  const nodes = (await Promise.all(groups.map((g) => registry.chainNodes(g)))).flat();
  return new Set(nodes.flatMap((n) => (n.active && n.canSeal !== false && n.ledger ? [n.ledger] : [])));
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
      const vouched = current === this.state.remembered ? new Set<string>() : await this.o.vouched();
      next = judgeLedger(this.state.remembered, current, vouched);
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
