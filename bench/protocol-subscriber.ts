/**
 * The bench's STOMP / MQTT subscriber, run as its own process:
 *   node bench/protocol-subscriber.ts '<json ProtocolSubscribeSettings>'
 * One connection, one subscription on `pattern` (STOMP SUBSCRIBE, or MQTT 5 SUBSCRIBE at QoS 1,
 * acknowledged by mqtt.js as each arrives). Records each delivery's topic, eventId (MQTT 5: the
 * `eventId` user property) and arrival time. Listens on a free port on 127.0.0.1 and prints
 * `listening <port>` once subscribed. `GET /count`: deliveries so far; `GET /arrivals`: all of
 * them as [topic, eventId, epochMs]; `POST /resume` starts a catch-up subscriber (below).
 *
 * With `catchUp`, nothing is received until `POST /resume`: STOMP then subscribes with
 * `eventId` = `catchUp.afterHeight` (the events of later blocks, from the ledger: a pattern
 * cannot start after an eventId, which is 100302 as in the original); MQTT subscribes at
 * start in a persistent session (clean start 0, session expiry) and disconnects, and `/resume`
 * connects again with the same client id, so the session continues from where it stopped.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { IPublishPacket } from "mqtt";
import { connectMqtt, connectStomp, type Delivery, epochNow, type Protocol, type ProtocolTarget } from "./protocol-clients.ts";

export interface ProtocolSubscribeSettings {
  protocol: Protocol;
  target: ProtocolTarget;
  pattern: string;
  /** STOMP: a block height to start after; MQTT: the persistent session's client id. */
  catchUp?: { afterHeight: string; clientId: string };
}

const s = JSON.parse(process.argv[2] ?? "{}") as ProtocolSubscribeSettings;
const arrivals: Delivery[] = [];

async function subscribeStomp(eventId?: string): Promise<void> {
  const client = await connectStomp(s.target.stompUrl);
  await new Promise<void>((resolve, reject) => {
    client.watchForReceipt("s1", () => resolve());
    client.onStompError = (f) => reject(new Error(`SUBSCRIBE refused: ${f.headers.code} ${f.headers.message}`));
    const headers: Record<string, string> = { id: "s1", ...(eventId ? { eventId } : {}) };
    client.subscribe(s.pattern, (m) => arrivals.push([m.headers.destination ?? "", m.headers.eventId ?? "", epochNow()]), headers);
  });
}

function onMqtt(topic: string, p: IPublishPacket): void {
  const id = p.properties?.userProperties?.eventId;
  arrivals.push([topic, Array.isArray(id) ? (id[0] ?? "") : (id ?? ""), epochNow()]);
}

const persistent = () => ({ clientId: s.catchUp?.clientId ?? "", clean: false, properties: { sessionExpiryInterval: 600 } });

async function subscribeMqtt(): Promise<void> {
  const client = await connectMqtt(s.target.mqttPort, s.catchUp ? persistent() : { clean: true }, s.catchUp ? undefined : onMqtt);
  const granted = await client.subscribeAsync(s.pattern, { qos: 1 });
  if (granted.some((g) => g.qos > 1)) throw new Error(`SUBSCRIBE ${s.pattern} refused: ${JSON.stringify(granted)}`);
  // A catch-up session is stored when its connection ends; it resumes on /resume.
  if (s.catchUp) await client.endAsync();
}

async function resume(): Promise<void> {
  if (!s.catchUp) return;
  if (s.protocol === "stomp") await subscribeStomp(s.catchUp.afterHeight);
  else await connectMqtt(s.target.mqttPort, persistent(), onMqtt);
}

if (s.protocol === "mqtt") await subscribeMqtt();
else if (!s.catchUp) await subscribeStomp();

const server = createServer((req, res) => {
  res.setHeader("content-type", "application/json");
  if (req.method === "GET") {
    res.end(JSON.stringify(req.url === "/count" ? arrivals.length : arrivals));
    return;
  }
  resume().then(
    () => res.end("true"),
    (err: unknown) => {
      res.statusCode = 500;
      res.end(JSON.stringify(String(err)));
    },
  );
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
