/**
 * A baseline for `npm run bench`, run as its own process: the least a Node HTTP server can do
 * for a publish. `node bench/baseline-server.ts http|express` listens on a free port on
 * 127.0.0.1, prints `listening <port>`, reads each request body and answers one fixed
 * SendResult. `express` is a bare express 5 route with the urlencoded parser, like the gateway's.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";

const ANSWER = JSON.stringify({ status: "SUCCESS", topic: "bench/t0", eventId: "4cf7f4cc-1-1" });
const kind = process.argv[2];

function announce(address: AddressInfo | string | null): void {
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);
}

if (kind === "http") {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => announce(server.address()));
} else if (kind === "express") {
  const app = express();
  app.post("/event-broker/rest/publish", express.urlencoded({ extended: false }), (_req, res) => {
    res.type("application/json").send(ANSWER);
  });
  const server = app.listen(0, "127.0.0.1", () => announce(server.address()));
  server.keepAliveTimeout = 60_000;
} else {
  process.stderr.write("usage: node bench/baseline-server.ts http|express\n");
  process.exit(2);
}
