import { type ComposeService, healthcheckUrls, portMappings } from "./compose-model.ts";

/** One section of an HAProxy configuration (`frontend http`, `backend gateways_http`, …) and its lines as words. */
export interface HaproxySection {
  kind: string;
  name: string;
  lines: string[][];
}

/** Splits haproxy.cfg into sections; `#` starts a comment, double quotes group words (with `\r\n` kept as written). */
export function parseHaproxy(text: string): HaproxySection[] {
  const sections: HaproxySection[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const words = [...raw.matchAll(/"((?:[^"\\]|\\.)*)"|(#.*)|(\S+)/g)].filter((m) => m[2] === undefined).map((m) => m[1] ?? m[3] ?? "");
    if (words.length === 0) continue;
    if (/^\S/.test(raw)) sections.push({ kind: words[0] as string, name: words[1] ?? "", lines: [] });
    else sections.at(-1)?.lines.push(words);
  }
  return sections;
}

const line = (s: HaproxySection, ...prefix: string[]) => s.lines.find((l) => prefix.every((p, i) => l[i] === p));
const lines = (s: HaproxySection, ...prefix: string[]) => s.lines.filter((l) => prefix.every((p, i) => l[i] === p));
const bindPort = (s: HaproxySection) => Number(line(s, "bind")?.[1]?.split(":").at(-1));
/** The value after `key` on a server line (`port 8080`). */
const after = (words: string[], key: string) => words[words.indexOf(key) + 1];

/** A gateway of the compose file as the balancer must reach it. */
export interface GatewayTarget {
  name: string;
  port: number;
  mqttPort?: number;
}

export const HAPROXY_CFG = "deploy/haproxy/haproxy.cfg";
const MOUNTED_AT = "/usr/local/etc/haproxy/haproxy.cfg";

/**
 * The balancer in front of the gateways: it reads this very file, serves every port it publishes,
 * and sends HTTP (WebSocket included) and MQTT over TCP to exactly the compose gateways on the ports
 * they listen on, each health-checked by its /readyz on its HTTP port.
 */
export function checkLoadBalancer(name: string, svc: ComposeService, cfg: string, gateways: GatewayTarget[], problems: string[]): void {
  if (!(svc.volumes ?? []).some((v) => v.replace(/:ro$/, "") === `./${HAPROXY_CFG}:${MOUNTED_AT}`))
    problems.push(`${name}: does not mount ./${HAPROXY_CFG} at ${MOUNTED_AT}`);
  const sections = parseHaproxy(cfg);
  const frontends = sections.filter((s) => s.kind === "frontend");
  const binds = new Map(frontends.map((f) => [bindPort(f), f]));
  for (const m of portMappings(svc))
    if (!binds.has(m.container)) problems.push(`${name}: publishes ${m.container}, where no frontend binds`);
  for (const url of healthcheckUrls(svc)) {
    const f = binds.get(Number(url.port));
    if (!f || line(f, "monitor-uri")?.[1] !== url.pathname)
      problems.push(`${name}: healthcheck requests ${url.href}, which no frontend's monitor-uri answers`);
  }
  const published = new Set(portMappings(svc).map((m) => m.container));
  const served = new Set<string>();
  for (const f of frontends.filter((x) => line(x, "default_backend"))) {
    if (!published.has(bindPort(f))) problems.push(`${name}: frontend ${f.name} binds ${bindPort(f)}, which is not published`);
    const backendName = line(f, "default_backend")?.[1];
    const backend = sections.find((s) => s.kind === "backend" && s.name === backendName);
    if (!backend) problems.push(`haproxy.cfg: frontend ${f.name} sends to backend ${backendName}, which is not defined`);
    else served.add(checkBackend(backend, gateways, problems));
  }
  for (const want of ["http", "tcp"])
    if (!served.has(want)) problems.push(`haproxy.cfg: no frontend sends ${want === "http" ? "HTTP" : "MQTT over TCP"} to the gateways`);
}

/** One pool: its servers are the gateways on PORT (mode http) or MQTT_PORT (mode tcp), each checked by /readyz. */
function checkBackend(b: HaproxySection, gateways: GatewayTarget[], problems: string[]): string {
  const mode = line(b, "mode")?.[1] ?? "http";
  const where = `haproxy.cfg backend ${b.name}`;
  const servers = lines(b, "server");
  const want = gateways.map((g) => `${g.name}:${mode === "http" ? g.port : g.mqttPort}`).sort();
  const have = servers.map((s) => s[2] ?? "").sort();
  if (JSON.stringify(have) !== JSON.stringify(want))
    problems.push(`${where}: servers ${have.join(", ")}, but the gateways listen at ${want.join(", ")}`);
  for (const s of servers.filter((x) => !x.includes("check"))) problems.push(`${where}: server ${s[1]} is not health-checked`);
  const healthPort = (g: GatewayTarget, s: string[] | undefined) => Number(s?.includes("port") ? after(s, "port") : g.port);
  if (mode === "http") {
    const chk = line(b, "option", "httpchk");
    if (chk?.[3] !== "/readyz") problems.push(`${where}: the health check asks ${chk?.slice(2).join(" ") || "nothing"}, not GET /readyz`);
    for (const g of gateways) {
      const s = servers.find((x) => x[2]?.startsWith(`${g.name}:`));
      if (s && healthPort(g, s) !== g.port)
        problems.push(`${where}: ${g.name} is checked on port ${healthPort(g, s)}, not its PORT ${g.port}`);
    }
    return "http";
  }
  // mode tcp: the MQTT listener accepts a connection and the same gateway's /readyz answers 200.
  const steps = lines(b, "tcp-check");
  const connects = steps.filter((s) => s[1] === "connect").map((s) => Number(after(s, "port")));
  const asksReady = steps.some((s) => s[1] === "send" && /^GET \/readyz HTTP\/1\.[01]\\r\\n/.test(s[2] ?? ""));
  const expects200 = steps.some((s) => s[1] === "expect" && (s[3] ?? "").includes("200"));
  for (const g of gateways) {
    if (!line(b, "option", "tcp-check") || !connects.includes(g.mqttPort ?? -1) || !connects.includes(g.port) || !asksReady || !expects200)
      problems.push(
        `${where}: ${g.name} is not checked by a connect to MQTT_PORT ${g.mqttPort} and GET /readyz on its PORT ${g.port} expecting 200`,
      );
  }
  return "tcp";
}
