import { decideLogEpoch, type Logger, type LogIdentity, type LogPartition } from "@evb/domain";
import type { LogInspector } from "@evb/eventlog";
import type { LogEpochStore } from "@evb/storage";

export type LogResolution = { ok: true; epoch: number; identity: LogIdentity } | { ok: false; reason: string };

export interface ResolveLogOptions {
  groupId: string;
  topic: string;
  consumerGroup: string;
  inspector: LogInspector;
  store: LogEpochStore;
  logger: Logger;
  now: () => number;
}

/**
 * Decides, before a group's log is consumed, which epoch of the ledger it is (see
 * `decideLogEpoch`), and records a newly adopted log. The reads are ordered so that indexers
 * already sealing cannot make a sound log look unsound: the committed offsets and log start
 * offsets first, then the ledger, then the log end offsets (committed ≤ ledger ≤ end holds
 * at every moment, and the log start only grows).
 */
export async function resolveLogEpoch(o: ResolveLogOptions): Promise<LogResolution> {
  for (let attempt = 1; ; attempt++) {
    const identity = await o.inspector.identity(o.topic);
    const committed = await o.inspector.committed(o.topic, o.consumerGroup);
    const starts = await o.inspector.offsets(o.topic);
    const ledger = await o.store.read(o.groupId);
    const ends = await o.inspector.offsets(o.topic);
    const partitions: LogPartition[] = ends.map((p) => ({
      partition: p.partition,
      low: starts.find((s) => s.partition === p.partition)?.low ?? p.low,
      high: p.high,
      committed: committed.get(p.partition) ?? null,
    }));
    const decision = decideLogEpoch(ledger, { identity, partitions });
    const where = { groupId: o.groupId, topic: o.topic, clusterId: identity.clusterId, topicId: identity.topicId };
    if (decision.kind === "continue") {
      if (decision.claim && (await o.store.claim(o.groupId, decision.epoch, identity))) {
        o.logger.info({ ...where, epoch: decision.epoch }, "this log is the one the ledger indexed before log identities were recorded");
      }
      return { ok: true, epoch: decision.epoch, identity };
    }
    if (decision.kind === "adopt") {
      if (await o.store.adopt(o.groupId, decision.epoch, identity, decision.from, o.now())) {
        const level = ledger.epochs.length > 0 ? "warn" : "info";
        o.logger[level](
          { ...where, epoch: decision.epoch, from: Object.fromEntries(decision.from) },
          ledger.epochs.length > 0
            ? "a new Kafka log behind an existing ledger: indexing it as a new epoch (heights and sequence numbers continue)"
            : "indexing this Kafka log as the ledger's first epoch",
        );
        return { ok: true, epoch: decision.epoch, identity };
      }
      if (attempt >= 5) throw new Error(`could not record the log of group ${o.groupId} as a new epoch`);
      continue; // another indexer recorded an epoch meanwhile: decide again
    }
    const offsets = decision.partitions
      .map((p) => `partition ${p.partition}: ledger ${p.ledger ?? "-"}, log ${p.low}..${p.high}, committed ${p.committed ?? "-"}`)
      .join("; ");
    const reason = `group ${o.groupId}: refusing log ${o.topic}: ${decision.reason} (${offsets}); see docs/ledger.md`;
    o.logger.error({ ...where, refusal: decision.refusal, partitions: decision.partitions }, reason);
    return { ok: false, reason };
  }
}
