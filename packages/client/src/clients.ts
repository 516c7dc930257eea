import type { CallOptions, ClientOptions, GroupCallOptions } from "./transport.ts";
import type { BlockchainInfo, ContractContext, SettingsUpdate, SubscriptionRecord, SubscriptionRecordE } from "./types.ts";
import { settingsParams, VariantClient } from "./variant-client.ts";

export interface SubscribeOptions extends GroupCallOptions {
  /** Continue this subscription (a UUID) instead of creating a new one. */
  subscriptionId?: string;
  /** Its own settings (rate, retries, window, paused, alert URL); absent: the broker's. A signing secret comes from `rotateSigningSecret`. */
  settings?: SettingsUpdate;
  /**
   * false: accept the subscription while the receiver is down (only the address policy is
   * checked); true: check that it answers. Either way a refused address is 100515 rather than the
   * original's 100502. Absent: the original's check.
   */
  verify?: boolean;
}

const nodeList = (nodes: string | readonly string[]) => (typeof nodes === "string" ? nodes : nodes.join(","));

/** Variant L (`/event-broker`): every reply but a successful publish in `{code, message, data}`. */
export class BrokerClientL extends VariantClient<"L"> {
  readonly variant = "L" as const;

  /** Subscriptions owned by each named gateway instance (`ip:port`), as arrays. */
  async listSubscription(
    nodeInstances: string | readonly string[],
    opts?: GroupCallOptions,
  ): Promise<Record<string, SubscriptionRecord[]>> {
    const params = this.withGroup({ nodeInstances: nodeList(nodeInstances) }, opts);
    return (await this.call("admin/listSubscription", params, opts)) as Record<string, SubscriptionRecord[]>;
  }

  /** This gateway's own subscriptions, keyed by id. */
  async innerListSubscription(opts?: GroupCallOptions): Promise<Record<string, SubscriptionRecord>> {
    return (await this.call("admin/innerListSubscription", this.withGroup({}, opts), opts)) as Record<string, SubscriptionRecord>;
  }

  /** "SUCCESS" for a configured group; BrokerError 200211 otherwise. */
  async validateGroupId(groupId: string, opts?: CallOptions): Promise<string> {
    return (await this.call("admin/validateGroupId", { groupId }, opts)) as string;
  }

  async getContractContext(opts?: GroupCallOptions): Promise<ContractContext> {
    return (await this.call("admin/getContractContext", this.withGroup({}, opts), opts)) as ContractContext;
  }
}

/** What M and E share: callback subscriptions. */
abstract class SubscribingClient<V extends "M" | "E"> extends VariantClient<V> {
  /** Subscribes `url` to a topic or `+`/`#` pattern; resolves with the subscription id. */
  async subscribe(topic: string, url: string, opts?: SubscribeOptions): Promise<string> {
    const verify = opts?.verify === undefined ? undefined : String(opts.verify);
    const params = this.withGroup({ topic, url, subscriptionId: opts?.subscriptionId, verify, ...settingsParams(opts?.settings) }, opts);
    return (await this.call("rest/subscribe", params, opts)) as string;
  }

  /** Ends a subscription; true. */
  async unSubscribe(subscriptionId: string, opts?: CallOptions): Promise<boolean> {
    return (await this.call("rest/unSubscribe", { subscriptionId }, opts)) as boolean;
  }
}

/** Variant M (`/event-m`): REST replies bare, admin replies enveloped. */
export class BrokerClientM extends SubscribingClient<"M"> {
  readonly variant = "M" as const;

  /** Subscriptions owned by each named gateway instance (`ip:port`), keyed by id. */
  async listSubscription(
    nodeIp: string | readonly string[],
    opts?: GroupCallOptions,
  ): Promise<Record<string, Record<string, SubscriptionRecord>>> {
    const params = this.withGroup({ nodeIp: nodeList(nodeIp) }, opts);
    return (await this.call("admin/listSubscription", params, opts)) as Record<string, Record<string, SubscriptionRecord>>;
  }

  async innerListSubscription(opts?: GroupCallOptions): Promise<Record<string, SubscriptionRecord>> {
    // M requires groupId here (the original's early form).
    const groupId = opts?.groupId ?? this.transport.options.groupId ?? "1";
    return (await this.call("admin/innerListSubscription", { groupId }, opts)) as Record<string, SubscriptionRecord>;
  }
}

/** Variant E (`/event-e`): every reply bare. */
export class BrokerClientE extends SubscribingClient<"E"> {
  readonly variant = "E" as const;

  /** Subscriptions of every gateway that owns some, keyed by node then id. */
  async listSubscription(opts?: GroupCallOptions): Promise<Record<string, Record<string, SubscriptionRecordE>>> {
    return (await this.call("admin/listSubscription", this.withGroup({}, opts), opts)) as Record<
      string,
      Record<string, SubscriptionRecordE>
    >;
  }

  async innerListSubscription(opts?: GroupCallOptions): Promise<Record<string, SubscriptionRecordE>> {
    return (await this.call("admin/innerListSubscription", this.withGroup({}, opts), opts)) as Record<string, SubscriptionRecordE>;
  }

  async blockchaininfo(opts?: GroupCallOptions): Promise<BlockchainInfo> {
    return (await this.call("admin/blockchaininfo", this.withGroup({}, opts), opts)) as BlockchainInfo;
  }
}

export type BrokerClient = BrokerClientL | BrokerClientM | BrokerClientE;

/** The client class of a variant chosen at run time (e.g. from a command-line flag). */
export function createClient(variant: "L" | "M" | "E", options: ClientOptions): BrokerClient {
  if (variant === "L") return new BrokerClientL(options);
  if (variant === "M") return new BrokerClientM(options);
  return new BrokerClientE(options);
}
