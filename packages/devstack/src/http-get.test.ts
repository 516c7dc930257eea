import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenOnBlockedPort } from "../../../test/support/blocked-port.ts";
import { httpGet } from "./http-get.ts";

// Issue 20: `npm start` asked its services' health with fetch, which refuses the Fetch standard's
// bad ports, so PORT=10080 npm start never saw the gateway ready though it answered.
describe("httpGet", () => {
  const server = createServer((req, res) => {
    if (req.url === "/slow") return; // never answers
    res.writeHead(req.url === "/readyz" ? 200 : 503, { "content-type": "application/json" }).end('{"reason":"r"}');
  });
  let base = "";
  beforeAll(async () => {
    base = `http://127.0.0.1:${await listenOnBlockedPort(server)}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("reads an answer on a port fetch refuses", async () => {
    await expect(fetch(`${base}/readyz`)).rejects.toThrow();
    expect(await httpGet(`${base}/readyz`, 2_000)).toEqual({ status: 200, body: '{"reason":"r"}' });
    expect((await httpGet(`${base}/other`, 2_000)).status).toBe(503);
  });

  it("rejects, saying so, when nothing answers in time", async () => {
    await expect(httpGet(`${base}/slow`, 200)).rejects.toThrow(/no answer from .* within 200 ms/);
  });
});
