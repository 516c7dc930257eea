import { createSocket, type Socket } from "node:dgram";
import { Resolver } from "node:dns/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressPolicy, parseCidrList } from "@evb/domain";
import type { HostLookup } from "@evb/subscriptions";
import { CallbackTransport } from "./callback-transport.ts";

// Crash survived: none. What one callback attempt may cost, whatever the network does.
describe("callback transport", () => {
  let silentDns: Socket;
  let dnsPort = 0;

  beforeAll(async () => {
    // A DNS server that receives every query and never answers, like a dead resolver.
    silentDns = createSocket("udp4");
    await new Promise<void>((resolve) => silentDns.bind(0, "127.0.0.1", resolve));
    dnsPort = silentDns.address().port;
  });
  afterAll(() => {
    silentDns?.close();
  });

  it("DNS lookup has no timeout in delivery: a resolver that never answers fails the attempt at its deadline", async () => {
    // A real resolver asking that server, willing to wait far longer than one attempt may take.
    const resolver = new Resolver({ timeout: 60_000, tries: 1 });
    resolver.setServers([`127.0.0.1:${dnsPort}`]);
    const lookup: HostLookup = async (host) => (await resolver.resolve4(host)).map((address) => ({ address, family: 4 }));
    const transport = new CallbackTransport({
      policy: new AddressPolicy(parseCidrList("127.0.0.0/8")),
      timeoutMs: 300,
      lookup,
      userAgent: "test",
    });
    try {
      const r = await transport.post("http://callback.invalid.example/cb", "{}", {});
      expect(r).toMatchObject({
        delivered: false,
        failure: "TIMEOUT",
        status: null,
        error: expect.stringMatching(/timed out resolving callback\.invalid\.example/),
      });
    } finally {
      resolver.cancel();
      transport.close();
    }
  });

  it("a slow subscriber can still delay others: healthy callbacks to a host never queue for a socket behind its slow ones", async () => {
    // One receiver address for all: /slow answers after 3 s, /fast, healthy, after 300 ms.
    const server: Server = createServer((req, res) => {
      req.resume();
      setTimeout(() => res.writeHead(200).end(), req.url === "/slow" ? 3000 : 300);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const transport = new CallbackTransport({
      policy: new AddressPolicy(parseCidrList("127.0.0.0/8")),
      timeoutMs: 1000,
      userAgent: "test",
    });
    try {
      // More slow attempts in flight than the old per-address socket limit (16). Behind them the
      // healthy attempt waited for a socket until they timed out, its own timer already running.
      const slow = Array.from({ length: 20 }, () => transport.post(`${base}/slow`, "{}", {}));
      await new Promise((r) => setTimeout(r, 100));
      const fast = await transport.post(`${base}/fast`, "{}", {});
      expect(fast).toEqual({ delivered: true, status: 200, excerpt: null });
      for (const r of await Promise.all(slow))
        expect(r).toMatchObject({ delivered: false, failure: "TIMEOUT", error: expect.stringMatching(/timed out/) });
    } finally {
      transport.close();
      server.closeAllConnections();
      server.close();
    }
  });
  it("a callback receiver that answers 2xx and then sends a broken, endless or huge body is counted as failed and retried", async () => {
    // The status line decides: each of these answered 200, so each is delivered, and the body
    // is read only up to a few KB (the huge and endless ones are cut off, not read to the end).
    let hugeBytesSent = 0;
    const server: Server = createServer((req, res) => {
      req.resume();
      if (req.url === "/broken") {
        res.writeHead(200, { "content-length": "1000" });
        res.write("only part of it");
        setTimeout(() => res.socket?.destroy(), 50);
      } else if (req.url === "/endless") {
        res.writeHead(200, { "content-type": "text/plain" });
        const tick = setInterval(() => res.write("still going "), 20);
        res.on("close", () => clearInterval(tick));
      } else {
        res.writeHead(200, { "content-length": String(64 * 1024 * 1024) });
        const chunk = Buffer.alloc(64 * 1024, "x");
        const pump = () => {
          while (hugeBytesSent < 64 * 1024 * 1024) {
            hugeBytesSent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("error", () => {});
        pump();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const transport = new CallbackTransport({
      policy: new AddressPolicy(parseCidrList("127.0.0.0/8")),
      timeoutMs: 1500,
      userAgent: "test",
    });
    try {
      const [broken, endless, huge] = await Promise.all(
        ["/broken", "/endless", "/huge"].map((p) => transport.post(`${base}${p}`, "{}", {})),
      );
      expect(broken).toEqual({ delivered: true, status: 200, excerpt: "only part of it" });
      expect(endless).toMatchObject({ delivered: true, status: 200, excerpt: expect.stringMatching(/^still going/) });
      expect(huge).toMatchObject({ delivered: true, status: 200, excerpt: "x".repeat(256) });
      // Cut off: far less than the 64 MiB announced was taken from the socket.
      expect(hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      transport.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it("keeps the start of a failed answer's body as the attempt's excerpt", async () => {
    const server: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(503, { "retry-after": "7" }).end(`{"error":"maintenance"}${"-".repeat(1000)}`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const transport = new CallbackTransport({
      policy: new AddressPolicy(parseCidrList("127.0.0.0/8")),
      timeoutMs: 1500,
      userAgent: "test",
    });
    try {
      const r = await transport.post(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, "{}", {});
      expect(r).toMatchObject({ delivered: false, failure: "SERVER_ERROR", status: 503, retryAfter: "7", error: "HTTP 503" });
      expect(r.excerpt?.startsWith('{"error":"maintenance"}---')).toBe(true);
      expect(Buffer.byteLength(r.excerpt ?? "")).toBe(256);
    } finally {
      transport.close();
      server.close();
    }
  });

  it("names each failure by its kind: refused, reset, no such host, not allowed, 410, 429", async () => {
    const server: Server = createServer((req, res) => {
      req.resume();
      if (req.url === "/reset") return void req.socket.destroy();
      res.writeHead(req.url === "/gone" ? 410 : 429, { "retry-after": "3" }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const noSuchHost: HostLookup = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    const transport = new CallbackTransport({
      policy: new AddressPolicy(parseCidrList("127.0.0.0/8")),
      timeoutMs: 1500,
      userAgent: "test",
    });
    const strict = new CallbackTransport({ policy: new AddressPolicy([]), timeoutMs: 1500, userAgent: "test", lookup: noSuchHost });
    try {
      const kinds = async (t: CallbackTransport, url: string) => {
        const r = await t.post(url, "{}", {});
        return r.delivered ? "delivered" : r.failure;
      };
      expect(await kinds(transport, `http://127.0.0.1:${closedPort}/`)).toBe("REFUSED");
      expect(await kinds(transport, `${base}/reset`)).toBe("RESET");
      expect(await kinds(strict, "http://callback.example/")).toBe("DNS");
      expect(await kinds(strict, `${base}/gone`)).toBe("NOT_ALLOWED");
      expect(await kinds(transport, `${base}/gone`)).toBe("GONE");
      expect(await transport.post(`${base}/slow-down`, "{}", {})).toMatchObject({ failure: "THROTTLED", status: 429, retryAfter: "3" });
    } finally {
      transport.close();
      strict.close();
      server.close();
    }
  });
});
