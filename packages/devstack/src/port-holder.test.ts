import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { describeTakenPorts, listeningInodes, portHolder, takenPorts } from "./port-holder.ts";

const PROC_NET_TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 424242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 515151 1 0000000000000000 20 4 30 10 -1
   2: 00000000:2384 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 616161 1 0000000000000000 100 0 0 10 0
`;

describe("listeningInodes", () => {
  it("finds the listening socket of a port, not its connections", () => {
    expect(listeningInodes(PROC_NET_TCP, 8080)).toEqual(["424242"]);
    expect(listeningInodes(PROC_NET_TCP, 9092)).toEqual(["616161"]);
    expect(listeningInodes(PROC_NET_TCP, 1)).toEqual([]);
  });
});

describe("takenPorts", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it("names a port another listener holds, and this very process as its holder", async () => {
    server = createServer();
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const taken = await takenPorts("127.0.0.1", [{ port, purpose: "gateway-1" }]);
    expect(taken).toEqual([{ port, purpose: "gateway-1", holder: { pid: process.pid, command: expect.any(String) } }]);
    expect(portHolder(port)?.pid).toBe(process.pid);
    expect(describeTakenPorts(taken)).toMatch(new RegExp(`^port ${port} \\(for gateway-1\\) is already in use by pid ${process.pid} \\(`));
    await new Promise((r) => server?.close(r));
    server = undefined;
    expect(await takenPorts("127.0.0.1", [{ port, purpose: "gateway-1" }])).toEqual([]);
  });
});
