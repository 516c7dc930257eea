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
      expect(fast).toEqual({ delivered: true, status: 200 });
      for (const r of await Promise.all(slow)) expect(r).toMatchObject({ delivered: false, error: expect.stringMatching(/timed out/) });
    } finally {
      transport.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
