import { isIP } from "node:net";
import type { Request } from "express";

/**
 * The caller's IP address as the gateway sees it: the connecting address, or the client a
 * trusted proxy names in X-Forwarded-For (express's `trust proxy`, fed from TRUSTED_PROXIES).
 * An IPv4-mapped IPv6 address is given in its IPv4 form. null when that is not an IP address at
 * all: a trusted proxy may forward any text (`127.evil.example`), and text is nobody's address.
 */
export function callerAddress(req: Request): string | null {
  const raw = (req.ip ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  return isIP(raw) === 0 ? null : raw;
}

/** Whether an IP address (as callerAddress gives it) is loopback: 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return ip.startsWith("127.");
  return family === 6 && /^(0{0,4}:){7}0{0,3}1$|^::1$/i.test(ip);
}

/** Who makes a request: the address as above (or the socket's when that is no IP), and the API key used, if any. */
export interface Caller {
  address: string;
  keyId: string | null;
}

/** The identity that owns what a caller creates: `key:<id>` with API keys, else the address. */
export function ownerId(caller: Caller): string {
  return caller.keyId === null ? caller.address : `key:${caller.keyId}`;
}
