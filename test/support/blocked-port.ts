import type { Server } from "node:http";

/** Ports on the Fetch standard's "bad ports" list (fetch refuses them), tried in order until one is free here. */
const FETCH_BLOCKED = [10080, 6665, 6666, 6667, 6668, 6669, 6000, 4190, 6697];

/** Listens with `server` on 127.0.0.1 on the first free port fetch refuses (10080 first), and resolves with it. */
export function listenOnBlockedPort(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    const tryPort = (i: number) => {
      const port = FETCH_BLOCKED[i];
      if (port === undefined) return reject(new Error("every port of the Fetch standard's bad-ports list tried here is in use"));
      server.once("error", () => tryPort(i + 1));
      server.listen(port, "127.0.0.1", () => resolve(port));
    };
    tryPort(0);
  });
}
