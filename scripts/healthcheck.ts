/**
 * The container healthcheck: exits 0 when a service's health URL answers 200, 1 otherwise.
 * The image has no curl or wget, so Node itself does the request.
 *
 * `node scripts/healthcheck.ts http://127.0.0.1:9000/readyz` checks that URL (what
 * docker-compose.yml does, so the test can compare it with the service's port). Without an
 * argument (the image's own HEALTHCHECK) it asks `/livez` on the gateway's PORT and the
 * indexer/notifier HEALTH_PORT on 127.0.0.1 and passes when either answers: one image runs all
 * three services and only one of them listens in a given container, so whichever port is
 * closed simply refuses. Liveness there, because an orchestrator that acts on the image's
 * check (swarm) replaces unhealthy containers, and a restart only helps a service that gave up.
 */
// The one file, not the package: a healthcheck runs every few seconds and needs nothing else of it.
import { httpGet } from "../packages/devstack/src/http-get.ts";

const TIMEOUT_MS = 3_000;

function candidates(): string[] {
  const arg = process.argv[2];
  if (arg) return [arg];
  const ports = [process.env.PORT ?? "8080", process.env.HEALTH_PORT ?? ""].filter((p) => /^\d+$/.test(p) && p !== "0");
  // A gateway with TLS_CERT_FILE serves HTTPS on PORT (its certificate is not checked: only the status is read).
  const gatewayScheme = process.env.TLS_CERT_FILE ? "https" : "http";
  const gatewayPort = process.env.PORT ?? "8080";
  return ports.map((p) => `${p === gatewayPort ? gatewayScheme : "http"}://127.0.0.1:${p}/livez`);
}

async function healthy(url: string): Promise<boolean> {
  try {
    return (await httpGet(url, TIMEOUT_MS)).status === 200;
  } catch {
    return false;
  }
}

const urls = candidates();
const results = await Promise.all(urls.map(healthy));
if (results.some(Boolean)) process.exit(0);
process.stderr.write(`unhealthy: no 200 from ${urls.join(" or ") || "(no port configured)"}\n`);
process.exit(1);
