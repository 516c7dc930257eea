import { z } from "zod";
import { boolVar, ConfigError, intVar, parseEnv, parsedVar, podIpVar, sharedEnv, withDerivedIdentity } from "@evb/config";
import { BRANDS, parseCidrList, parseMounts } from "@evb/domain";
import { parseBasicUsers, parseTrustedProxies } from "./http/access-control.ts";
import { openAccessProblem } from "./http/open-access-guard.ts";
import { callbackEnv } from "@evb/subscriptions";
import { registryEnv } from "@evb/registry";
import { tlsEnv, tlsSettingsProblems } from "./tls/tls-settings.ts";

export const GatewayEnv = z.object({
  ...sharedEnv,
  ...registryEnv,
  ...callbackEnv,
  ...tlsEnv,
  CALLBACK_CONNECT_TIMEOUT_MS: intVar(
    5_000,
    100,
    60_000,
    "milliseconds subscribe waits for the callback's TCP/TLS connection check, 100–60000",
  ),
  HOST: z.string().min(1).default("127.0.0.1").describe("the address to listen on, e.g. 0.0.0.0 in a container"),
  PORT: intVar(8080, 0, 65535, "a TCP port, 0–65535 (0 picks a free one)"),
  VARIANTS: parsedVar(
    parseMounts,
    "L:/event-broker,M:/event-m,E:/event-e",
    'comma-separated variant:path mounts, e.g. "L:/event-broker,M:/event-m,E:/event"',
  ),
  BRAND: z
    .enum(BRANDS)
    .default("event")
    .describe(
      "event or weevent: weevent accepts and answers the original broker's spellings (weevent-format, weevent-tag, weevent-plus, …) so its clients work unchanged; event keeps the neutral names",
    ),
  PUBLISH_TIMEOUT_MS: intVar(10_000, 100, 600_000, "milliseconds a publish waits for its block, 100–600000"),
  IDEMPOTENCY_RETENTION_MS: intVar(
    86_400_000,
    60_000,
    2_592_000_000,
    "milliseconds a publish's Idempotency-Key counts from its event's seal, 60000–2592000000 (30 days)",
  ),
  ACCESS_LOG: boolVar(
    true,
    "true or false: one info log line per HTTP request (request id, method, path, variant, operation, result, duration)",
  ),
  BODY_LIMIT_BYTES: intVar(1_048_576, 65_536, 67_108_864, "largest form body in bytes, 65536–67108864"),
  HTTP_HEADERS_TIMEOUT_MS: intVar(
    20_000,
    1_000,
    600_000,
    "milliseconds a client has to send a whole request head (408 and close after), 1000–600000",
  ),
  HTTP_REQUEST_TIMEOUT_MS: intVar(
    60_000,
    1_000,
    3_600_000,
    "milliseconds a client has to send a whole request, body included (408 and close after; the wait for the answer is not counted), 1000–3600000",
  ),
  HTTP_BODY_IDLE_TIMEOUT_MS: intVar(
    10_000,
    500,
    600_000,
    "milliseconds a request body may pause between two pieces (408 and close after), 500–600000",
  ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: intVar(
    65_000,
    1_000,
    600_000,
    "milliseconds an idle keep-alive connection stays open, 1000–600000 (keep it above a load balancer's idle timeout)",
  ),
  MAX_SUBSCRIPTIONS_PER_CALLER: intVar(
    1_000,
    1,
    1_000_000,
    "most live subscriptions one caller may hold (an API key, or an address when keys are off), 1–1000000",
  ),
  MAX_TOPIC_FILTERS_PER_CALLER: intVar(
    2_000,
    1,
    1_000_000,
    "most topics and patterns one caller (an API key, or an address when keys are off) may hold in live STOMP subscriptions and MQTT filters on one gateway, 1–1000000",
  ),
  DATABASE_FEED_POOL_SIZE: intVar(
    4,
    1,
    100,
    "Postgres connections the gateway's STOMP and MQTT subscriptions read the ledger through, apart from the pool HTTP operations use, 1–100",
  ),
  API_ALLOWED_CIDRS: parsedVar(
    parseCidrList,
    "",
    'comma-separated addresses or CIDR ranges allowed to call the API besides loopback, e.g. "10.0.0.0/8,192.168.1.7"; empty allows everyone',
  ),
  TRUSTED_PROXIES: parsedVar(
    parseTrustedProxies,
    "",
    'comma-separated proxies whose X-Forwarded-For is believed: addresses, CIDR ranges or loopback, linklocal, uniquelocal, e.g. "loopback,10.0.5.2"; empty (the default) believes none',
  ),
  API_BASIC_AUTH: parsedVar(
    parseBasicUsers,
    "",
    'comma-separated user:password pairs for HTTP Basic authentication, e.g. "ops:s3cret"; empty turns it off',
  ),
  API_KEYS: boolVar(
    false,
    "true to require an API key (Authorization: Bearer, made with npm run keys) or Basic credentials on every request; false turns keys off",
  ),
  API_KEY_CACHE_MS: intVar(
    5_000,
    0,
    600_000,
    "milliseconds a gateway caches an API key lookup, 0–600000; a revoked key is refused within this time",
  ),
  ALLOW_OPEN_ACCESS: boolVar(false, "true to serve a non-loopback HOST with no API_KEYS, API_BASIC_AUTH or API_ALLOWED_CIDRS on purpose"),
  STOMP_MAX_FRAME_BYTES: intVar(
    65_536,
    4_096,
    1_048_576,
    "largest STOMP WebSocket message in bytes (a larger one closes the connection with 1009), 4096–1048576",
  ),
  STOMP_HEARTBEAT_MS: intVar(
    30_000,
    500,
    600_000,
    "milliseconds between the STOMP heart-beats the gateway asks for and its WebSocket pings; a connection silent for two is closed, 500–600000",
  ),
  STOMP_POLL_MS: intVar(
    2_000,
    100,
    60_000,
    "milliseconds between reads of the chain heads for STOMP subscribers, in case a new-block hint was lost, 100–60000",
  ),
  STOMP_MAX_DESTINATION_TOPICS: intVar(
    100,
    1,
    10_000,
    "most topics and patterns one STOMP SUBSCRIBE destination may list (one more is 100110), 1–10000",
  ),
  STOMP_PAGE_EVENTS: intVar(200, 1, 10_000, "events a STOMP subscription reads from the ledger per query, 1–10000"),
  STOMP_SEND_BUFFER_BYTES: intVar(
    1_048_576,
    16_384,
    67_108_864,
    "bytes waiting to be written to a STOMP connection past which its subscriptions stop reading the ledger, 16384–67108864",
  ),
  STOMP_MAX_PENDING_PUBLISHES: intVar(
    256,
    1,
    100_000,
    "STOMP SENDs of one connection waiting for their block before the connection's next frames wait, 1–100000",
  ),
  MQTT_PORT: z
    .preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(0).max(65535).optional())
    .describe("the TCP port MQTT (3.1.1 and 5) listens on, at HOST, 0–65535 (0 picks a free one); unset: no MQTT over TCP"),
  MQTT_MAX_PACKET_BYTES: intVar(
    65_536,
    4_096,
    1_048_576,
    "largest MQTT packet read in bytes (its remaining length; a larger one closes the connection), 4096–1048576",
  ),
  // 1,000: at a live stream of 7,500-8,500 events/s on the 2-core bench a PUBACK took ~0.1 s
  // to come back, so a window of 100 held a QoS 1 subscriber to 3,500-4,900/s (docs/performance.md).
  MQTT_MAX_INFLIGHT: intVar(
    1_000,
    1,
    65_535,
    "QoS 1 deliveries one MQTT connection may have unacknowledged before its subscriptions stop reading the ledger, 1–65535",
  ),
  MQTT_SESSION_EXPIRY_MAX_MS: intVar(
    604_800_000,
    1_000,
    2_147_483_647,
    "milliseconds a persistent MQTT session (clean session 0, MQTT 5 session expiry) is kept after its connection ends, at most, 1000–2147483647",
  ),
  CONSOLE_HISTORY_INTERVAL_MS: intVar(
    10_000,
    100,
    600_000,
    "milliseconds between the samples of the console's chart history in Redis (one gateway of the deployment writes each), 100–600000",
  ),
  INSTANCE_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/)
    .optional()
    .describe("this instance's ip:port as other nodes and admin/listNodes show it; defaults to POD_IP:PORT, else HOST:PORT"),
  POD_IP: podIpVar,
});
export type GatewayConfig = z.infer<typeof GatewayEnv>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  // Replicas of one Deployment each get their own address (docs/configuration.md).
  const config = parseEnv(
    "gateway",
    GatewayEnv,
    withDerivedIdentity("gateway", env, { sealerIndex: false, portVar: "PORT", portField: GatewayEnv.shape.PORT }),
  );
  const open = openAccessProblem(config);
  if (open) throw new ConfigError("gateway", [open]);
  const tls = tlsSettingsProblems(config);
  if (tls.length > 0) throw new ConfigError("gateway", tls);
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError("gateway", [
      `HTTP_HEADERS_TIMEOUT_MS (${config.HTTP_HEADERS_TIMEOUT_MS}) is above HTTP_REQUEST_TIMEOUT_MS (${config.HTTP_REQUEST_TIMEOUT_MS}): a head is part of the request; lower the first or raise the second`,
    ]);
  }
  return config;
}
