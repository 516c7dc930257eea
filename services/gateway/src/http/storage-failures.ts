import type { Variant } from "@evb/domain";
import { isStorageTimeout } from "@evb/storage";
import type { DocumentedFailure } from "../http/operation.ts";

/**
 * The wire error a storage failure answers (behaviour.md 3.1): E answers TRANSACTION_FAILED for
 * any storage error or timeout in the topic operations and publish; M and L answer
 * TRANSACTION_TIMEOUT when a storage read timed out, and otherwise `mlOther` (TRANSACTION_FAILED
 * for a rejected topic creation, RPC_FAILED for the chain queries of the admin API, the generic
 * code elsewhere when undefined).
 */
export function storageFailure(opts: { e?: DocumentedFailure; mlOther?: DocumentedFailure }) {
  return (variant: Variant, err: unknown): DocumentedFailure | undefined => {
    if (variant === "E") return opts.e;
    return isStorageTimeout(err) ? "TRANSACTION_TIMEOUT" : opts.mlOther;
  };
}

/** Topic operations and publish: E TRANSACTION_FAILED; M, L TRANSACTION_TIMEOUT on a timeout. */
export const topicStorageFailure = storageFailure({ e: "TRANSACTION_FAILED" });

/** The admin API's chain queries: M, L RPC_FAILED (TRANSACTION_TIMEOUT on a timeout). */
export const chainQueryFailure = storageFailure({ mlOther: "RPC_FAILED" });
