/**
 * What one reply body means, for any variant: the broker's error object is the only JSON object
 * whose keys are `code` and `message` (plus `data: null` in L) with a non-zero code; the success
 * envelope has `code` 0 and `data`; every bare success (booleans, strings, objects) has no `code`
 * key (behaviour.md 2.1). So no per-variant table is needed to read a reply.
 */
export type ReadReply = { ok: true; data: unknown } | { ok: false; code: number; message: string | null };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function readReply(body: unknown): ReadReply {
  if (!isObject(body) || typeof body.code !== "number" || !("message" in body)) return { ok: true, data: body };
  const message = typeof body.message === "string" ? body.message : null;
  if (body.code === 0 && "data" in body) return { ok: true, data: body.data };
  return { ok: false, code: body.code, message };
}
