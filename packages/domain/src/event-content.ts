import { BrokerError } from "./errors.ts";
import { isBlank } from "./text.ts";

export const CONTENT_MAX_LENGTH = 10240;
export const EXTENSIONS_MAX_LENGTH = 1024;
export const EXTENSION_PREFIX = "event-";

/** Content checks of publish (behaviour.md 7.1 steps 4–5), counted in UTF-16 code units. */
export function checkContent(content: string): BrokerError | null {
  if (isBlank(content)) return BrokerError.of("CONTENT_BLANK");
  if (content.length > CONTENT_MAX_LENGTH) return BrokerError.of("CONTENT_TOO_LONG");
  return null;
}

/**
 * Length of the map rendered as `{k1=v1, k2=v2}`: 2 for an empty map, otherwise
 * 2 + Σ(len(k) + 1 + len(v)) + 2·(n − 1) (behaviour.md 7.2).
 */
export function renderedExtensionsLength(ext: Record<string, string>): number {
  const entries = Object.entries(ext);
  if (entries.length === 0) return 2;
  let n = 2 + 2 * (entries.length - 1);
  for (const [k, v] of entries) n += k.length + 1 + v.length;
  return n;
}

export function checkExtensions(ext: Record<string, string>): BrokerError | null {
  return renderedExtensionsLength(ext) > EXTENSIONS_MAX_LENGTH ? BrokerError.of("EXTENSIONS_TOO_LONG") : null;
}
