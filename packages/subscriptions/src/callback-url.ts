import { isIP } from "node:net";

export interface CallbackTarget {
  url: URL;
  protocol: "http:" | "https:";
  /** Host as written, without IPv6 brackets. */
  host: string;
  port: number;
}

/**
 * The longest callback URL taken (characters), as browsers and most servers cap a request line.
 * Without a cap a 900 KB URL was accepted, stored, listed and sent 20 times per event.
 */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/**
 * A subscribe `url` the broker will call: an absolute http or https URL with a host, at most
 * MAX_CALLBACK_URL_LENGTH characters as sent and as normalised (the href). Anything else (another scheme, no host, unparseable, too
 * long) is refused up front, since it could never be delivered to, and some schemes (file:,
 * gopher:) are classic request-forgery vectors.
 */
export function parseCallbackUrl(raw: string): CallbackTarget | null {
  if (raw.length > MAX_CALLBACK_URL_LENGTH) return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  // The cap is on what is stored and called: percent-encoding can make the href nine times the input.
  if (url.href.length > MAX_CALLBACK_URL_LENGTH) return null;
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (host === "") return null;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return { url, protocol: url.protocol, host, port };
}

export function isIpLiteral(host: string): boolean {
  return isIP(host) !== 0;
}
