/**
 * The bench's callback receiver, run as its own process: `node bench/receiver.ts <delayMs>`.
 * Listens on a free port on 127.0.0.1 and prints `listening <port>`. Every POST is a callback:
 * its arrival time (epoch ms, sub-millisecond) is recorded with the subscription, topic and
 * event id, and it is answered 200 after `delayMs`. `GET /count` answers how many arrived,
 * `GET /arrivals` all of them as [subscriptionId, topic, eventId, epochMs] rows, `POST /reset` forgets them.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const delayMs = Number(process.argv[2] ?? 0);
let arrivals: Array<[string, string, string, number]> = [];

const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(req.url === "/count" ? arrivals.length : arrivals));
    return;
  }
  if (req.url === "/reset") {
    arrivals = [];
    res.end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        subscriptionId: string;
        event: { topic: string; eventId: string };
      };
      arrivals.push([body.subscriptionId, body.event.topic, body.event.eventId, at]);
    } catch {
      arrivals.push(["?", "?", "?", at]);
    }
    if (delayMs > 0) setTimeout(() => res.end("ok"), delayMs);
    else res.end("ok");
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
