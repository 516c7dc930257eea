import type { Request } from "express";
import type { Variant } from "@evb/domain";
import type { Caller } from "./caller-address.ts";
import type { Params } from "./params.ts";
import type { OperationKind, Reply } from "./replies.ts";

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
   * What an unexpected failure (storage down or timing out) answers, when not the generic code;
   * e.g. E's storage errors are 200202 (see storage-failures.ts).
   */
  failureCode?: (variant: Variant, err: unknown) => number | undefined;
}
