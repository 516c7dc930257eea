import type { Request } from "express";
import type { BrokerErrorName, Variant } from "@evb/domain";
import type { ApiRole } from "@evb/storage";
import type { Caller } from "./caller-address.ts";
import type { Params } from "./params.ts";
import type { ParamFailureKind } from "./param-collector.ts";
import type { OperationKind, Reply } from "./replies.ts";

/** The wire errors with a fixed message an unexpected failure may answer (behaviour.md 3.1). */
export type DocumentedFailure = Extract<BrokerErrorName, "TRANSACTION_TIMEOUT" | "TRANSACTION_FAILED" | "RPC_FAILED">;

export interface OperationContext {
  variant: Variant;
  params: Params;
  req: Request;
  /** The caller's address (X-Forwarded-For honoured when trusted). */
  remoteIp: string;
  /** Who calls: address and API key; owns the subscriptions it creates. */
  caller: Caller;
}

/**
 * Which group a call touches, for an API key's group scope (docs/security.md):
 * - `named`: its `groupId` (absent or blank: "1"), the default;
 * - `groupless`: none, so a key of any group may call it (it touches no one group, or, like
 *   unSubscribe, names what it touches by an id whose owner the store checks);
 * - `group-one`: always group 1, whatever `groupId` says (E's blockchaininfo);
 * - `all`: every group (`*`), whatever `groupId` says;
 * - `all-unless-named`: every group unless a `groupId` narrows it.
 */
type GroupScope = "named" | "groupless" | "group-one" | "all" | "all-unless-named";

/**
 * Who may call an operation when API keys are on (access-control.ts): the role it needs and the
 * group it touches. Defaults: role `read`, scope `named`, so a read of one group declares nothing.
 * HTTP operations carry these fields; STOMP and MQTT check a SEND or SUBSCRIBE against the
 * declaration of rest/publish or rest/subscribe.
 */
export interface OperationAccess {
  /** The role a key needs (`admin` holds every role); default `read`. Anything that writes declares one. */
  role?: ApiRole;
  /** Default `named`. */
  groupScope?: GroupScope;
  /**
   * How the `groupId` checked against the key's groups is read: `optional` (default; a repeated
   * one is refused as the operation would refuse it) or `first` (publish takes the first of
   * repeated values, behaviour.md 7.1).
   */
  groupIdParam?: "first" | "optional";
  /** Each call counts against the key's publish rate (429 past it); default false. */
  rateLimited?: boolean;
}

/**
 * One operation of the interface. `path` is relative to the mount, e.g. `rest/open` or
 * `admin/group/general`; `variants` lists the variants that have it; any other variant answers
 * as for an unknown path.
 */
export interface Operation extends OperationAccess {
  path: string;
  kind: OperationKind;
  variants: readonly Variant[];
  handle(ctx: OperationContext): Promise<Reply>;
  /**
   * The wire error an unexpected failure (storage down or timing out) answers, by its table
   * name, when not the generic code; e.g. E's storage errors are TRANSACTION_FAILED (see
   * storage-failures.ts).
   */
  failureCode?: (variant: Variant, err: unknown) => DocumentedFailure | undefined;
  /**
   * The wire error a request whose parameters could not be read answers, by why, instead of the
   * generic code with what went wrong (e.g. publish: a body over the limit is CONTENT_TOO_LONG).
   * An unreadable body, and the framing and timing failures HTTP answers itself, are never mapped.
   */
  paramFailures?: Partial<Record<ParamFailureKind, BrokerErrorName>>;
  /**
   * `json`: the request body is one JSON document (rest/publishBatch), read within
   * BODY_LIMIT_BYTES and parsed after its depth is counted (json-body.ts), given to the handler
   * as `params.json`; its top-level `groupId` is the `groupId` the key's group scope is checked
   * against. Default: form parameters only (request-params.ts).
   */
  body?: "json";
  /** How many publishes one call counts against the key's publish rate when `rateLimited` (default 1; a batch: its events). */
  rateWeight?: (params: Params) => number;
}
