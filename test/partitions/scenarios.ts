import { chainTopicName } from "@evb/domain";
import { createKafka } from "@evb/eventlog";
import { silentLogger } from "@evb/domain";
import { type Bed, SERVICES, type ServiceHost } from "./bed.ts";

/** What a fault did, and what the judges need to know about it. */
export interface Fault {
  /** Undoes the fault (link up, cut removed, process started again). */
  heal: () => Promise<void>;
  /** Services whose host is cut off, so that a probe cannot reach them. */
  unreachable: readonly string[];
  /** Services that lose what they need: their readiness must say so within 5 s. */
  mustFail: readonly string[];
  /** Services killed and started again (their way back to ready is a start, not judged). */
  restarted?: readonly string[];
  /** Which host was hit, in words, for the report. */
  detail: string;
}

export interface Scenario {
  name: string;
  /** The fault, in words. */
  what: string;
  /** Longest allowed gap without a callback (ms). */
  callbackGoalMs: number;
  /** A store outage: publishes and callbacks must resume within 2 s of its return. */
  resumeGoalMs?: number;
  /** Fault length, when it is not the run's (the outage scenarios use 25 s, as measured before). */
  faultMs?: number;
  inflict: (bed: Bed) => Promise<Fault>;
}

/** The broker leading the group's chain topic (partition 0), asked from the client host. */
async function chainLeader(bed: Bed): Promise<number> {
  const kafka = createKafka({ brokers: (bed.env.KAFKA_BROKERS as string).split(","), clientId: "bed", logger: silentLogger });
  const admin = kafka.admin();
  try {
    const topic = chainTopicName(bed.env.KAFKA_TOPIC_PREFIX ?? "evb.", "1");
    const meta = await admin.metadata({ topics: [topic], forceUpdate: true });
    const leader = meta.topics.get(topic)?.partitions[0]?.leader;
    if (leader === undefined || leader < 1) throw new Error(`the chain topic ${topic} has no leader`);
    return leader;
  } finally {
    await admin.close().catch(() => {});
  }
}

function pullCable(bed: Bed, host: string, mustFail: readonly string[] = []): Fault {
  bed.net.linkDown(host);
  const unreachable = (SERVICES as readonly string[]).includes(host) ? [host] : [];
  return { heal: async () => bed.net.linkUp(host), unreachable, mustFail, detail: `${host} (${bed.net.host(host).ip}) lost its link` };
}

const ALL: readonly ServiceHost[] = SERVICES;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "kafka-chain-leader",
    what: "the Kafka broker leading the chain topic loses its link",
    callbackGoalMs: 10_000,
    inflict: async (bed) => pullCable(bed, `kafka-${await chainLeader(bed)}`),
  },
  {
    name: "kafka-other-broker",
    what: "a Kafka broker that does not lead the chain topic (log partitions only) loses its link",
    callbackGoalMs: 10_000,
    inflict: async (bed) => {
      const leader = await chainLeader(bed);
      return pullCable(bed, `kafka-${leader === 3 ? 1 : leader + 1}`);
    },
  },
  {
    name: "indexer-link",
    what: "an indexer loses its link",
    callbackGoalMs: 10_000,
    inflict: async (bed) => pullCable(bed, "indexer-1"),
  },
  {
    name: "indexer-postgres-cut",
    what: "an indexer's packets to Postgres are dropped (one way); everything else reaches it",
    callbackGoalMs: 10_000,
    inflict: async (bed) => {
      bed.net.cutOneWay("indexer-1", "postgres");
      return {
        heal: async () => bed.net.healCuts("indexer-1"),
        unreachable: [],
        mustFail: ["indexer-1"],
        detail: "indexer-1 -> postgres dropped",
      };
    },
  },
  {
    name: "indexer-kill",
    what: "an indexer is killed (SIGKILL) and started again after the fault",
    callbackGoalMs: 10_000,
    inflict: async (bed) => {
      bed.kill("indexer-1");
      return {
        heal: () => bed.startService("indexer-1"),
        unreachable: ["indexer-1"],
        mustFail: [],
        restarted: ["indexer-1"],
        detail: "indexer-1 killed",
      };
    },
  },
  {
    name: "notifier-link",
    what: "a notifier loses its link mid-dispatch",
    callbackGoalMs: 15_000,
    inflict: async (bed) => pullCable(bed, "notifier-1"),
  },
  {
    name: "gateway-link",
    what: "a gateway loses its link; the publisher fails over to the other",
    callbackGoalMs: 10_000,
    inflict: async (bed) => pullCable(bed, "gateway-1"),
  },
  {
    name: "postgres-outage",
    what: "Postgres loses its link for 25 s",
    callbackGoalMs: 10_000,
    resumeGoalMs: 2_000,
    faultMs: 25_000,
    inflict: async (bed) => pullCable(bed, "postgres", ALL),
  },
  {
    name: "redis-outage",
    what: "Redis loses its link for 25 s",
    callbackGoalMs: 10_000,
    resumeGoalMs: 2_000,
    faultMs: 25_000,
    inflict: async (bed) => pullCable(bed, "redis", ["notifier-1", "notifier-2"]),
  },
];
