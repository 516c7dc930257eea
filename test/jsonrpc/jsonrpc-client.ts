import { JSONRPCClient } from "json-rpc-2.0";
import type { CallResult } from "../support/http.ts";
import { rawCall } from "../support/raw-http.ts";

/**
 * A JSON-RPC client from npm (json-rpc-2.0) over fetch, with what the library does not show kept
 * for the test: the HTTP status and body of the latest exchange, and the exchange in flight (a
 * notification's, which the library does not wait for).
 */
export function libraryClient(url: string, headers: Record<string, string> = {}) {
  const seen: { status: number; text: string; pending: Promise<void> } = { status: 0, text: "", pending: Promise.resolve() };
  const client: JSONRPCClient = new JSONRPCClient((payload) => {
    seen.pending = (async () => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(60_000),
      });
      seen.status = res.status;
      seen.text = await res.text();
      if (seen.text !== "") client.receive(JSON.parse(seen.text));
    })();
    return seen.pending;
  });
  return { client, seen };
}

/**
 * The request headers the original's Java clients sent (jsonrpc4j's JsonRpcHttpClient on a JDK's
 * HttpURLConnection), as recorded: no authentication, `application/json-rpc`.
 */
const JAVA_CLIENT_HEADERS = {
  "content-type": "application/json-rpc",
  "cache-control": "no-cache",
  pragma: "no-cache",
  "user-agent": "Java/17.0.15",
  accept: "text/html, image/gif, image/jpeg, */*; q=0.2",
  connection: "keep-alive",
};

/** A recorded request of the original clients' shape: `id` a string of a random 31-bit integer, members id, jsonrpc, method, params. */
export function javaClientBody(method: string, params: unknown): string {
  const id = String(Math.floor(Math.random() * 2 ** 31));
  return `{"id":"${id}","jsonrpc":"2.0","method":"${method}","params":${JSON.stringify(params)}}`;
}

/** Sends `body` as the Java clients did, to `{context}/jsonrpc`; extra headers (an API key) on top. */
export function javaClientCall(base: string, context: string, body: string, headers: Record<string, string> = {}): Promise<CallResult> {
  return rawCall(base, { method: "POST", path: `${context}/jsonrpc`, headers: { ...JAVA_CLIENT_HEADERS, ...headers }, body });
}
