/** A readiness answer, as a prober saw it (status 0: no answer within a second). */
export interface Probe {
  status: number;
  reason: string;
  /** When the probe was sent (epoch ms). */
  at: number;
}

/**
 * Asks each `/readyz` every `everyMs` and appends what it answered to its list (newest last), so a
 * test can assert both directions of a fault: not ready, with the reason, and ready again.
 * Returns the function that stops it.
 */
export function probeReadiness(targets: readonly { url: () => string; into: Probe[] }[], everyMs = 250): () => void {
  const probe = (url: string, into: Probe[]) => {
    const at = Date.now();
    void fetch(url, { signal: AbortSignal.timeout(1_000) })
      .then(async (r) => into.push({ status: r.status, reason: String(((await r.json()) as { reason?: unknown }).reason ?? ""), at }))
      .catch((err: unknown) => into.push({ status: 0, reason: String(err), at }));
  };
  const timer = setInterval(() => {
    for (const t of targets) probe(t.url(), t.into);
  }, everyMs);
  return () => clearInterval(timer);
}
