import type { Variant } from "@evb/domain";
import { isStorageTimeout } from "@evb/storage";

/**
 * The codes a storage failure answers (behaviour.md 3.1): E answers 200202 for any storage
 * error or timeout in the topic operations and publish; M and L answer 200201 when a storage
 * read timed out, and otherwise `mlOther` (200202 for a rejected topic creation, 200214 for
 * the chain queries of the admin API, the generic code elsewhere when undefined).
 */
export function storageFailure(opts: { e?: number; mlOther?: number }) {
  return (variant: Variant, err: unknown): number | undefined => {
    if (variant === "E") return opts.e;
    return isStorageTimeout(err) ? 200201 : opts.mlOther;
  };
}

/** Topic operations and publish: E 200202; M, L 200201 on a timeout. */
export const topicStorageFailure = storageFailure({ e: 200202 });

/** The admin API's chain queries: M, L 200214 (200201 on a timeout). */
export const chainQueryFailure = storageFailure({ mlOther: 200214 });
