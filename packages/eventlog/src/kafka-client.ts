import { Admin, type BaseOptions, type RetryDelayGetter } from "@platformatic/kafka";
import type { Logger } from "@evb/domain";

/**
 * How long the Kafka clients wait, chosen on purpose (docs/configuration.md, "Kafka client
 * timeouts"). kafkajs waited 30 s for any answer, so a silent broker held a partition, a
 * publish or a probe for 30 s before anything noticed.
 */
export interface KafkaTimeouts {
  /**
   * Longest wait for a broker's answer to one request, ms (`KAFKA_REQUEST_TIMEOUT_MS`). A
   * request past it fails, its connection is dropped and the request is retried on a fresh one.
   * Consumer-group joins, which the broker holds until the rebalance ends, get the rebalance
   * timeout on top.
   */
  requestMs: number;
  /** Longest wait for a TCP connection to a broker, ms (`KAFKA_CONNECT_TIMEOUT_MS`). */
  connectMs: number;
}

export const KAFKA_TIMEOUT_DEFAULTS: KafkaTimeouts = { requestMs: 5_000, connectMs: 1_000 };

/**
 * How long a client trusts its cached cluster metadata when nothing made it refresh sooner (ms).
 * Leader moves are learnt at once from the brokers' own answers (not the leader, a dropped
 * connection), which refresh it; but a broker that went silent answers nothing, and a client
 * whose last request to it timed out may still hold the old leader. 10 s (30 s before the
 * multi-host bed measured it) bounds that to one metadata request per client every 10 s of use.
 */
const METADATA_MAX_AGE_MS = 10_000;

/**
 * Retries of a failed request: 12 more tries, 200 ms doubling to 1 s between them (about 10 s of
 * pauses in all). Capped at 1 s: a failed try has already waited out its timeout, and a leader
 * the cluster elected meanwhile should be tried at once, not after a 5 s pause (the multi-host bed
 * saw publishes wait out such pauses after the brokers had moved the partitions).
 */
const RETRIES = 12;
const retryDelay: RetryDelayGetter = (_client, _op, attempt) => Math.min(200 * 2 ** Math.max(0, attempt - 1), 1_000);

/**
 * How every connection to the brokers is secured: TLS (`tls`: CA, client certificate, the server
 * name check) and SASL (`sasl`), as @platformatic/kafka takes them. Built from the settings by
 * `kafkaSecurity` (@evb/runtime); empty: plain text, no authentication.
 */
export type KafkaSecurity = Pick<BaseOptions, "tls" | "tlsServerName" | "sasl">;

export interface KafkaOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  timeouts?: Partial<KafkaTimeouts>;
  security?: KafkaSecurity;
}

/**
 * A service's way to Kafka: where the brokers are, its client id and timeouts. It holds no
 * connection; each part makes its own @platformatic/kafka client from `options()` (producers,
 * consumers and admin clients each keep their own connections), so that one part's slow request
 * never queues behind another's.
 */
export class KafkaClient {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Where the parts built on this client log what the client itself does not (a failed produce request). */
  readonly logger: Logger;
  readonly timeouts: KafkaTimeouts;
  private readonly security: KafkaSecurity;

  constructor(o: KafkaOptions) {
    this.brokers = o.brokers;
    this.clientId = o.clientId;
    this.logger = o.logger;
    this.timeouts = { ...KAFKA_TIMEOUT_DEFAULTS, ...o.timeouts };
    this.security = o.security ?? {};
  }

  /** The options every client starts from (the security too): `requestMs` longer for a consumer-group member (its joins). */
  options(suffix: string, requestMs = this.timeouts.requestMs): BaseOptions {
    return {
      ...this.security,
      clientId: `${this.clientId}-${suffix}`,
      bootstrapBrokers: rotated(this.brokers),
      connectTimeout: this.timeouts.connectMs,
      requestTimeout: requestMs,
      metadataMaxAge: METADATA_MAX_AGE_MS,
      retries: RETRIES,
      retryDelay,
      autocreateTopics: false,
    };
  }

  /** A fresh admin client; its owner closes it. */
  admin(suffix = "admin"): Admin {
    return new Admin(this.options(suffix));
  }
}

/**
 * The bootstrap list, started at a random broker. The client asks the first broker of the list
 * that it can reach for metadata; with one list for every client, every client asked the same
 * first broker, and while that broker was silent (a pulled cable) each metadata refresh of each
 * client first waited out the connect timeout on it. Rotated per client, a silent broker costs
 * only the clients that start at it. Exported for its unit test.
 */
export function rotated<T>(list: readonly T[], random: () => number = Math.random): T[] {
  const at = Math.floor(random() * list.length);
  return [...list.slice(at), ...list.slice(0, at)];
}

/** The one place a service's Kafka access is set up; services get it from their `main.ts`. */
export function createKafka(o: KafkaOptions): KafkaClient {
  return new KafkaClient(o);
}
