import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { type AddressPolicy, TIMED_OUT, withTimeout } from "@evb/domain";
import { type CallbackTarget, type HostLookup, isIpLiteral, resolveCallbackHost, systemLookup } from "@evb/subscriptions";

/** `refused`: the policy allows none of the host's addresses (else it was not reachable now). */
export type ConnectivityResult = { ok: true; address: string } | { ok: false; reason: string; refused: boolean };

/**
 * subscribe's connectivity check (behaviour.md 8.1 step 5): open a TCP connection to the
 * callback's host and port (with the TLS handshake for https) and close it; no HTTP request is
 * sent. Only addresses the policy allows are dialled, and the whole check, resolution included,
 * is bounded by `timeoutMs` (the original had no bound and could hang a subscribe forever).
 */
export async function checkConnectivity(
  target: CallbackTarget,
  opts: { policy: AddressPolicy; timeoutMs: number; lookup?: HostLookup },
): Promise<ConnectivityResult> {
  const deadline = Date.now() + opts.timeoutMs;
  const resolved = await withTimeout(resolveCallbackHost(target.host, opts.policy, opts.lookup ?? systemLookup), opts.timeoutMs);
  if (resolved === TIMED_OUT) return { ok: false, refused: false, reason: `resolving ${target.host} timed out` };
  if (!resolved.ok) return resolved;
  let last = "no address";
  for (const a of resolved.addresses) {
    const left = deadline - Date.now();
    if (left <= 0) return { ok: false, refused: false, reason: "timed out" };
    const r = await dial(target, a.address, left);
    if (r === null) return { ok: true, address: a.address };
    last = r;
  }
  return { ok: false, refused: false, reason: last };
}

/** null on success, else why the connection failed. */
function dial(target: CallbackTarget, address: string, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    let socket: Socket;
    const done = (reason: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    if (target.protocol === "https:") {
      socket = tlsConnect({
        host: address,
        port: target.port,
        servername: isIpLiteral(target.host) ? undefined : target.host,
      });
      socket.once("secureConnect", () => done(null));
    } else {
      socket = netConnect({ host: address, port: target.port });
      socket.once("connect", () => done(null));
    }
    socket.once("error", (err: NodeJS.ErrnoException) => done(`${address}:${target.port}: ${err.code ?? err.message}`));
    const timer = setTimeout(() => done(`${address}:${target.port}: timed out`), timeoutMs);
  });
}
