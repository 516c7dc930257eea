import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../../services/gateway/src/config.ts";
import { loadNotifierConfig } from "../../services/notifier/src/config.ts";
import { type CheckOptions, checkCompose } from "./compose-check.ts";
import { COMPOSE_TEXT, ROOT, readCompose, SECRETS_ENV } from "./compose-fixture.ts";
import {
  type ComposeDoc,
  composeEnv,
  healthcheckUrls,
  MissingVariableError,
  parseDockerfile,
  portMappings,
  requiredVariables,
} from "./compose-model.ts";
import { HAPROXY_CFG, parseHaproxy } from "./haproxy-check.ts";
import { SERVICE_SCHEMAS } from "./service-schemas.ts";

// What users of `docker compose up` expect beyond a deployment that starts: MQTT over TCP, one
// balanced address for all gateways, callbacks to receivers on the compose network, signed
// callbacks. Static, like compose.test.ts (no Docker engine here), except `haproxy -c`.
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");
const cfg = read(HAPROXY_CFG);
const image = parseDockerfile(read("Dockerfile"));
const options: CheckOptions = { schemas: SERVICE_SCHEMAS, image, root: ROOT, haproxy: cfg };
const compose = readCompose();
const gateways = Object.entries(compose.services).filter(([, s]) => [s.command ?? []].flat().join(" ").includes("services/gateway/"));
const gatewayConfig = (svc: (typeof gateways)[number][1]) => loadGatewayConfig({ ...image.env, ...composeEnv(svc) });

describe("docker-compose.yml as users expect it", () => {
  it("publishes each gateway's MQTT TCP listener, on the port its configuration reads", () => {
    expect(gateways.map(([n]) => n)).toEqual(["gateway-1", "gateway-2"]);
    const hostPorts = new Set<number>();
    for (const [name, svc] of gateways) {
      const mqtt = gatewayConfig(svc).MQTT_PORT;
      expect(mqtt, name).toBe(1883);
      const mapping = portMappings(svc).find((m) => m.container === mqtt);
      expect(mapping?.host, name).toBeTypeOf("number");
      hostPorts.add(mapping?.host as number);
    }
    expect(hostPorts.size).toBe(gateways.length);
  });

  it("balances HTTP and MQTT over TCP across exactly the compose gateways, each checked by its /readyz", () => {
    const sections = parseHaproxy(cfg);
    const backend = (name: string) => sections.find((s) => s.kind === "backend" && s.name === name);
    const servers = (name: string) =>
      backend(name)
        ?.lines.filter((l) => l[0] === "server")
        .map((l) => l[2]);
    expect(servers("gateways_http")).toEqual(gateways.map(([n, s]) => `${n}:${gatewayConfig(s).PORT}`));
    expect(servers("gateways_mqtt")).toEqual(gateways.map(([n, s]) => `${n}:${gatewayConfig(s).MQTT_PORT}`));
    expect(backend("gateways_http")?.lines).toContainEqual(["option", "httpchk", "GET", "/readyz"]);
    expect(backend("gateways_mqtt")?.lines).toContainEqual(["tcp-check", "send", "GET /readyz HTTP/1.0\\r\\n\\r\\n"]);
    const lb = compose.services.lb ?? {};
    expect(lb.image).toMatch(/^haproxy:3\.\d+(-alpine)?$/);
    expect(portMappings(lb).map((m) => m.container)).toEqual([8080, 1883]);
    expect(healthcheckUrls(lb).map((u) => u.pathname)).toEqual(["/readyz"]);
  });

  it("allows callbacks to exactly the compose network's subnet, wherever it is moved", () => {
    for (const env of [SECRETS_ENV, { ...SECRETS_ENV, EVB_SUBNET: "192.168.77.0/24" }]) {
      const doc = readCompose(env);
      const subnet = doc.networks?.default?.ipam?.config?.[0]?.subnet;
      expect(subnet).toBe(env.EVB_SUBNET ?? "10.213.0.0/24");
      for (const [name] of [...gateways, ["notifier-1"], ["notifier-2"]])
        expect(composeEnv(doc.services[name as string] ?? {}).CALLBACK_ALLOWED_CIDRS, name as string).toBe(subnet);
    }
  });

  it("refuses to start without WEBHOOK_SECRETS and SECRETS_KEY, naming the command that makes them", () => {
    const required = requiredVariables(COMPOSE_TEXT);
    expect([...required.keys()].sort()).toEqual(["SECRETS_KEY", "WEBHOOK_SECRETS"]);
    for (const hint of required.values()) expect(hint).toContain("npm run compose-secrets");
    expect(() => readCompose({})).toThrow(MissingVariableError);
    expect(() => readCompose({ SECRETS_KEY: SECRETS_ENV.SECRETS_KEY as string })).toThrow(/required variable WEBHOOK_SECRETS/);
    expect(() => readCompose({ ...SECRETS_ENV, SECRETS_KEY: "" })).toThrow(/required variable SECRETS_KEY .*npm run compose-secrets/);
  });

  it("signs every callback and seals the stored secrets with what `npm run compose-secrets` writes", () => {
    const notifier = loadNotifierConfig({ ...image.env, ...composeEnv(compose.services["notifier-1"] ?? {}) });
    expect(notifier.WEBHOOK_SECRETS).toEqual([SECRETS_ENV.WEBHOOK_SECRETS]);
    for (const [name, svc] of gateways) expect(gatewayConfig(svc).SECRETS_KEY, name).toBe(SECRETS_ENV.SECRETS_KEY);
  });

  it("pins every image it pulls to a release line, never latest or a bare major", () => {
    const pulled = Object.values(compose.services).filter((s) => s.build === undefined && s.image !== "event-broker:local");
    expect(pulled.length).toBeGreaterThan(5);
    for (const s of pulled) expect(s.image).toMatch(/:(\d+\.\d+[\w.-]*|v\d+\.\d+\.\d+)$|^postgres:\d+$/);
  });
});

describe("docker-compose.yml's load balancer and expectations, broken on purpose", () => {
  type Mutation = (d: ComposeDoc) => void;
  const env =
    (svc: string, key: string, value: string | undefined): Mutation =>
    (d) => {
      const e = d.services[svc]?.environment as Record<string, string | undefined>;
      if (value === undefined) delete e[key];
      else e[key] = value;
    };
  const field =
    (svc: string, key: string, value: unknown): Mutation =>
    (d) => {
      (d.services[svc] as Record<string, unknown>)[key] = value;
    };
  const cases: Array<[string, Mutation, string]> = [
    ["a gateway without MQTT_PORT", env("gateway-1", "MQTT_PORT", undefined), "gateway-1: MQTT_PORT must be a fixed port"],
    [
      "a gateway whose MQTT port is not published",
      field("gateway-2", "ports", ["8082:8080"]),
      "gateway-2: no published port maps to MQTT_PORT 1883",
    ],
    [
      "a gateway on another MQTT port than the balancer's",
      env("gateway-1", "MQTT_PORT", "1884"),
      "gateways_mqtt: servers gateway-1:1883, gateway-2:1883, but the gateways listen at gateway-1:1884",
    ],
    [
      "a gateway on another HTTP port than the balancer's",
      env("gateway-2", "PORT", "8090"),
      "gateways_http: servers gateway-1:8080, gateway-2:8080, but the gateways listen at gateway-1:8080, gateway-2:8090",
    ],
    ["an image on latest", field("redis", "image", "redis:latest"), "redis: image redis:latest is not pinned"],
    ["an image on a bare major", field("lb", "image", "haproxy:3"), "lb: image haproxy:3 is not pinned"],
    ["an image with no tag", field("kafka-2", "image", "apache/kafka"), "kafka-2: image apache/kafka is not pinned"],
    [
      "a callback allowlist wider than the network",
      env("notifier-2", "CALLBACK_ALLOWED_CIDRS", "10.0.0.0/8"),
      'notifier-2: CALLBACK_ALLOWED_CIDRS="10.0.0.0/8" is not the compose network\'s subnet 10.213.0.0/24',
    ],
    ["a network with no fixed subnet", (d) => void delete d.networks, "networks.default has no fixed subnet"],
    ["no balancer", (d) => void delete d.services.lb, "no haproxy service in front of the gateways"],
    [
      "a balancer reading another file",
      field("lb", "volumes", ["./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"]),
      "lb: does not mount ./deploy/haproxy/haproxy.cfg",
    ],
    ["a balancer not publishing MQTT", field("lb", "ports", ["8080:8080"]), "lb: frontend mqtt binds 1883, which is not published"],
    [
      "a balancer publishing a port nothing binds",
      field("lb", "ports", ["8080:8080", "1883:1883", "9999:9999"]),
      "lb: publishes 9999, where no frontend binds",
    ],
    [
      "a balancer healthcheck nothing answers",
      field("lb", "healthcheck", { test: ["CMD", "wget", "-q", "--spider", "http://127.0.0.1:8405/readyz"] }),
      "lb: healthcheck requests http://127.0.0.1:8405/readyz",
    ],
  ];
  it.each(cases)("fails on %s", (_name, mutate, expected) => {
    const doc = JSON.parse(JSON.stringify(compose)) as ComposeDoc;
    mutate(doc);
    expect(checkCompose(doc, options).join("\n")).toContain(expected);
  });

  const cfgCases: Array<[string, string, string, string]> = [
    ["a gateway left out of the HTTP pool", "  server gateway-2 gateway-2:8080 check", "", "gateways_http: servers gateway-1:8080, but"],
    [
      "an HTTP pool checking liveness",
      "option httpchk GET /readyz",
      "option httpchk GET /livez",
      "gateways_http: the health check asks GET /livez, not GET /readyz",
    ],
    [
      "an HTTP check on another port",
      "gateway-1:8080 check",
      "gateway-1:8080 check port 9000",
      "gateways_http: gateway-1 is checked on port 9000",
    ],
    ["a server that is not checked", "gateway-2:1883 check", "gateway-2:1883", "gateways_mqtt: server gateway-2 is not health-checked"],
    [
      "an MQTT pool checked on the wrong HTTP port",
      "tcp-check connect port 8080",
      "tcp-check connect port 8081",
      "gateways_mqtt: gateway-1 is not checked by a connect to MQTT_PORT 1883 and GET /readyz",
    ],
    [
      "an MQTT pool not asking readiness",
      'tcp-check send "GET /readyz',
      'tcp-check send "GET /livez',
      "gateways_mqtt: gateway-2 is not checked",
    ],
    [
      "a frontend sending to no backend",
      "default_backend gateways_mqtt",
      "default_backend nowhere",
      "frontend mqtt sends to backend nowhere, which is not defined",
    ],
    [
      "a health frontend with another path",
      "monitor-uri /readyz",
      "monitor-uri /up",
      "lb: healthcheck requests http://127.0.0.1:8404/readyz",
    ],
  ];
  it.each(cfgCases)("fails on haproxy.cfg with %s", (_name, from, to, expected) => {
    expect(cfg).toContain(from);
    expect(checkCompose(compose, { ...options, haproxy: cfg.replace(from, to) }).join("\n")).toContain(expected);
  });
});

// Debian's haproxy (2.6 here) reads the same syntax as the image's 3.x for everything this file uses.
const haproxyBinary = spawnSync("haproxy", ["-v"]).status === 0;
describe("deploy/haproxy/haproxy.cfg", () => {
  it.skipIf(!haproxyBinary)("is valid for haproxy -c (skipped when no haproxy binary is installed: apt-get install haproxy)", () => {
    const res = spawnSync("haproxy", ["-c", "-f", join(ROOT, HAPROXY_CFG)], { encoding: "utf8" });
    expect(res.status, res.stderr + res.stdout).toBe(0);
    // The gateways' names resolve only on the compose network; anything else it warns about is a fault.
    const warnings = `${res.stdout}\n${res.stderr}`.split("\n").filter((l) => l.includes("[WARNING]"));
    expect(warnings.filter((w) => !/could not resolve address 'gateway-\d'/.test(w))).toEqual([]);
  });
});
