import { generate, type Packet, parser } from "mqtt-packet";
import { exchange } from "./framing-socket.ts";
import { serverFrames, wsExchange } from "./stomp-wire.ts";

const BOUND_MS = 10_000;

/** Why an ordinary STOMP session (CONNECT → CONNECTED, DISCONNECT → RECEIPT and close 1000) fails now, or null. */
export async function stompSessionProblem(url: string): Promise<string | null> {
  const text = "CONNECT\naccept-version:1.2\n\n\u0000DISCONNECT\nreceipt:done\n\n\u0000";
  const ex = await wsExchange(url, [{ bytes: Buffer.from(text), binary: false }], { boundMs: BOUND_MS }).catch((err: unknown) =>
    String(err),
  );
  if (typeof ex === "string") return `an ordinary STOMP session failed: ${ex}`;
  const got = serverFrames(ex.messages)?.map((f) => `${f.command}${f.headers.get("receipt-id") ?? ""}`);
  if (JSON.stringify(got) !== '["CONNECTED","RECEIPTdone"]' || ex.closeCode !== 1000) {
    return `an ordinary STOMP session got ${JSON.stringify(got)}, close ${ex.closeCode}`;
  }
  return null;
}

/** The packets in `bytes` as MQTT `version` reads them; null when they do not parse. */
export function mqttPackets(bytes: Buffer, version: 4 | 5): Packet[] | null {
  const got: Packet[] = [];
  let failed = false;
  const p = parser({ protocolVersion: version });
  p.on("packet", (packet: Packet) => got.push(packet));
  p.on("error", () => {
    failed = true;
  });
  p.parse(bytes);
  return failed ? null : got;
}

/** Why an ordinary MQTT 3.1.1 session over TCP (CONNECT → CONNACK 0, PINGREQ → PINGRESP, DISCONNECT → close) fails now, or null. */
export async function mqttSessionProblem(port: number): Promise<string | null> {
  const packets: Packet[] = [
    { cmd: "connect", protocolId: "MQTT", protocolVersion: 4, clean: true, clientId: `fz-ok-${process.pid}`, keepalive: 0 },
    { cmd: "pingreq" },
    { cmd: "disconnect" },
  ];
  const bytes = Buffer.concat(packets.map((p) => generate(p)));
  const ex = await exchange(`http://127.0.0.1:${port}`, [{ bytes, delayMs: 0 }], { boundMs: BOUND_MS }).catch((err: unknown) =>
    String(err),
  );
  if (typeof ex === "string") return `an ordinary MQTT session failed: ${ex}`;
  const got = mqttPackets(ex.bytes, 4)?.map((p) => (p.cmd === "connack" ? `connack ${p.returnCode}` : p.cmd));
  if (JSON.stringify(got) !== '["connack 0","pingresp"]' || ex.timedOut) {
    return `an ordinary MQTT session got ${JSON.stringify(got)}${ex.timedOut ? ", and no close" : ""}`;
  }
  return null;
}
