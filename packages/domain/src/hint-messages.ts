import { z } from "zod";
import { Receipt } from "./log-record.ts";

/** On the blocks channel: the indexer sealed `height` in `groupId`. */
export const BlockNudge = z.object({ groupId: z.string(), height: z.number().int() });
export type BlockNudge = z.infer<typeof BlockNudge>;

/** On the wake channel: subscription ids whose delivery should start now. */
export const WakeMessage = z.array(z.string());

/**
 * On a gateway's receipt channel: the receipts of one block for that gateway. Entries are
 * checked one by one (Receipt), so one malformed entry does not cost the others.
 */
export const ReceiptMessage = z.union([z.array(z.unknown()), Receipt]);

/** Parses a hint message: the value, or null when it is not JSON or not of the schema. */
export function parseHint<T>(schema: z.ZodType<T>, message: string): T | null {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return null;
  }
  const r = schema.safeParse(value);
  return r.success ? r.data : null;
}
