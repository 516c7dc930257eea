export interface CallResult {
  status: number;
  contentType: string;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

/**
 * One HTTP call over a real socket. `params` go in the query string for GET and in a form body
 * for POST (URL-encoded as the interface requires).
 */
export async function call(
  base: string,
  path: string,
  params: Record<string, string | string[]> = {},
  method: "GET" | "POST" | "PUT" | "DELETE" = "GET",
): Promise<CallResult> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const item of Array.isArray(v) ? v : [v]) qs.append(k, item);
  const init: RequestInit = { method, signal: AbortSignal.timeout(60_000) };
  let url = `${base}${path}`;
  if (method === "GET") {
    if ([...qs].length > 0) url += `?${qs.toString()}`;
  } else {
    init.body = qs.toString();
    init.headers = { "content-type": "application/x-www-form-urlencoded" };
  }
  return callResultOf(await fetch(url, init));
}

/** An answer as a CallResult: status, content type, text and (when it is JSON) the parsed body. */
export async function callResultOf(res: Response): Promise<CallResult> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text, json };
}
