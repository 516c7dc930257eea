import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HAPROXY_CFG } from "./haproxy-check.ts";

/** Where a local copy of the compose balancer listens and what it sends to. */
export interface LocalBalancer {
  http: number;
  mqtt: number;
  health: number;
  /** Its statistics as CSV at `http://127.0.0.1:<stats>/stats;csv`, to read each server's state. */
  stats: number;
  /** One loopback address per gateway; every gateway listens on the same two ports, as in compose. */
  gatewayHosts: string[];
  gatewayPort: number;
  gatewayMqttPort: number;
}

/**
 * deploy/haproxy/haproxy.cfg as it is, with only the addresses moved to this machine: the binds
 * onto loopback ports, `gateway-N` onto its own loopback address, the gateways' ports onto the
 * test's, plus a statistics page. Timeouts, modes, balancing and health checks are the file's.
 */
export function localHaproxyConfig(root: string, b: LocalBalancer): string {
  let cfg = readFileSync(join(root, HAPROXY_CFG), "utf8");
  const swap = (from: RegExp, to: string) => {
    if (!from.test(cfg)) throw new Error(`${HAPROXY_CFG} no longer has ${from}`);
    cfg = cfg.replace(from, to);
  };
  swap(/^(\s*)bind :8080$/m, `$1bind 127.0.0.1:${b.http}`);
  swap(/^(\s*)bind :1883$/m, `$1bind 127.0.0.1:${b.mqtt}`);
  swap(/^(\s*)bind :8404$/m, `$1bind 127.0.0.1:${b.health}`);
  swap(/^(\s*tcp-check connect port) 1883$/m, `$1 ${b.gatewayMqttPort}`);
  swap(/^(\s*tcp-check connect port) 8080$/m, `$1 ${b.gatewayPort}`);
  b.gatewayHosts.forEach((host, i) => {
    swap(new RegExp(`gateway-${i + 1}:8080`, "g"), `${host}:${b.gatewayPort}`);
    swap(new RegExp(`gateway-${i + 1}:1883`, "g"), `${host}:${b.gatewayMqttPort}`);
  });
  // Docker's DNS is not here, and the servers are addresses now.
  cfg = cfg.replace(/ resolvers docker/g, "");
  return `${cfg}\nfrontend stats\n  bind 127.0.0.1:${b.stats}\n  mode http\n  stats enable\n  stats uri /stats\n`;
}

/** Each server's status (`UP`, `DOWN`, …) and total sessions from the statistics CSV, by `backend/server`. */
export async function serverStates(statsPort: number): Promise<Map<string, { status: string; sessions: number }>> {
  const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`, { signal: AbortSignal.timeout(5_000) })).text();
  const [head = "", ...rows] = csv.trim().split("\n");
  const cols = head.replace(/^# /, "").split(",");
  const at = (row: string[], name: string) => row[cols.indexOf(name)] ?? "";
  const out = new Map<string, { status: string; sessions: number }>();
  for (const row of rows.map((r) => r.split(","))) {
    if (["FRONTEND", "BACKEND"].includes(at(row, "svname"))) continue;
    out.set(`${at(row, "pxname")}/${at(row, "svname")}`, { status: at(row, "status"), sessions: Number(at(row, "stot")) });
  }
  return out;
}
