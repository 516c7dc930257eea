import { syncBuiltinESMExports } from "node:module";
import net from "node:net";

/**
 * Fault injection for the health tests: a network cut between one service process and Kafka,
 * done from outside the code under test. Loaded into a child by NODE_OPTIONS="--import <this
 * file>", each SIGUSR2 toggles the cut: connections to the Kafka brokers (the ports in
 * KAFKA_BROKERS) are destroyed, and new ones are refused, as a partition would do; the next
 * SIGUSR2 heals it. The shared broker itself is never touched.
 */
const ports = new Set((process.env.KAFKA_BROKERS ?? "").split(",").map((hp) => Number(hp.split(":").pop())));
const open = new Set<net.Socket>();
let cut = false;
const connect = net.connect;

function target(args: unknown[]): number | undefined {
  const first = args[0];
  if (typeof first === "object" && first !== null && "port" in first) return Number((first as { port: unknown }).port);
  return typeof first === "number" ? first : undefined;
}

// @platformatic/kafka dials through `import { createConnection } from "node:net"`, an ES binding that
// follows the patch once syncBuiltinESMExports() has run.
const cutConnect = ((...args: unknown[]) => {
  const port = target(args);
  if (port === undefined || !ports.has(port)) return (connect as (...a: unknown[]) => net.Socket)(...args);
  // A refused connection while cut: port 1 on loopback has no listener.
  const socket = (connect as (...a: unknown[]) => net.Socket)(...(cut ? [{ host: "127.0.0.1", port: 1 }, ...args.slice(1)] : args));
  open.add(socket);
  socket.once("close", () => open.delete(socket));
  return socket;
}) as typeof net.connect;
(net as { connect: typeof net.connect }).connect = cutConnect;
(net as { createConnection: typeof net.createConnection }).createConnection = cutConnect;
syncBuiltinESMExports();

process.on("SIGUSR2", () => {
  cut = !cut;
  if (cut) for (const s of open) s.destroy(new Error("injected network cut"));
});
