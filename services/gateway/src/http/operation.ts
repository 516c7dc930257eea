import type { Request } from "express";
import type { BrokerErrorName, Variant } from "@evb/domain";
import type { Caller } from "./caller-address.ts";
import type { Params } from "./params.ts";
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
 * One operation of the interface. `path` is relative to the mount, e.g. `rest/open` or
 * `admin/group/general`; `variants` lists the variants that have it; any other variant answers
 * as for an unknown path.
 */
export interface Operation {
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
}
