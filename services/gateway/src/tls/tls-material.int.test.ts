import { chmodSync, copyFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, createServer, type Server } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestCa } from "../../../../test/support/test-certs.ts";
import { readTlsMaterial, TlsMaterialError } from "./tls-material.ts";
import { TlsReloader } from "./tls-reloader.ts";

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, child: () => silent } as never;

/** The CN of the certificate a TLS server at `port` serves to a new connection. */
function servedCn(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: "127.0.0.1", ca, servername: "localhost" }, () => {
      resolve(String(s.getPeerCertificate().subject.CN));
      s.end();
    });
    s.on("error", reject);
  });
}

describe("readTlsMaterial: one line that names the setting, the file and the fix", () => {
  let ca: TestCa;
  beforeAll(() => {
    ca = new TestCa();
  });
  afterAll(() => ca.remove());

  it("loads a certificate with its key and CA", () => {
    const s = ca.leaf("gw-a");
    const m = readTlsMaterial({ certFile: s.cert, keyFile: s.key, caFile: ca.ca.cert });
    expect(m.subject).toContain("CN=gw-a");
    expect(m.notAfter.getTime()).toBeGreaterThan(Date.now());
  });
  it("refuses a missing, unreadable, non-PEM or mismatched file", () => {
    const s = ca.leaf("gw-b");
    const other = ca.leaf("gw-c");
    const junk = join(ca.dir, "junk.pem");
    writeFileSync(junk, "not a certificate\n");
    const locked = join(ca.dir, "locked.key");
    copyFileSync(s.key, locked);
    chmodSync(locked, 0o000);
    const cases: Array<[Parameters<typeof readTlsMaterial>[0], RegExp]> = [
      [
        { certFile: "/nope/cert.pem", keyFile: s.key },
        /^TLS_CERT_FILE \(\/nope\/cert\.pem\): no such file; point it at a PEM certificate$/,
      ],
      [{ certFile: s.cert, keyFile: "/nope/k" }, /^TLS_KEY_FILE \(\/nope\/k\): no such file/],
      [{ certFile: junk, keyFile: s.key }, /^TLS_CERT_FILE \(.*junk\.pem\) is not a PEM certificate; point it at one$/],
      [{ certFile: s.cert, keyFile: junk }, /^TLS_KEY_FILE \(.*junk\.pem\) is not an unencrypted PEM private key/],
      [
        { certFile: s.cert, keyFile: other.key },
        /^TLS_KEY_FILE \(.*\) is not the key of TLS_CERT_FILE \(.*\); use the key the certificate was made for$/,
      ],
      [{ certFile: s.cert, keyFile: s.key, caFile: junk }, /^TLS_CA_FILE \(.*junk\.pem\) is not a PEM CA certificate/],
    ];
    // root reads any file: the permission case only where permissions hold.
    if (process.getuid?.() !== 0)
      cases.push([{ certFile: s.cert, keyFile: locked }, /^TLS_KEY_FILE \(.*\): cannot be read .*permission denied/]);
    for (const [files, message] of cases) {
      expect(() => readTlsMaterial(files)).toThrow(TlsMaterialError);
      expect(() => readTlsMaterial(files)).toThrow(message);
    }
  });
});

describe("TlsReloader: a new certificate for new connections, the old connection kept", () => {
  let ca: TestCa;
  let server: Server;
  let reloader: TlsReloader;
  let port: number;
  let certFile: string;
  let keyFile: string;

  beforeAll(async () => {
    ca = new TestCa();
    const first = ca.leaf("first");
    certFile = join(ca.dir, "live.pem");
    keyFile = join(ca.dir, "live.key");
    copyFileSync(first.cert, certFile);
    copyFileSync(first.key, keyFile);
    reloader = new TlsReloader({ files: { certFile, keyFile }, pollMs: 100, logger: silent, now: Date.now });
    server = createServer(reloader.context, (s) => s.on("data", (b) => s.write(b)));
    reloader.attach(server);
    reloader.start();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    reloader.close();
    await new Promise((r) => server.close(r));
    ca.remove();
  });

  /** Renames a new certificate and key into place, as a rotation should (each file whole at once). */
  function rotate(cn: string): void {
    const next = ca.leaf(cn);
    copyFileSync(next.key, `${keyFile}.new`);
    copyFileSync(next.cert, `${certFile}.new`);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
  }

  async function untilServed(cn: string): Promise<void> {
    // Waits on the file watch (polled every 100 ms) by looking at what new handshakes get.
    for (let i = 0; i < 200; i++) {
      if ((await servedCn(port, ca.ca.pem)) === cn) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${cn} was never served`);
  }

  it("a file change and SIGHUP each serve the new certificate; a connection opened before stays up", async () => {
    expect(await servedCn(port, ca.ca.pem)).toBe("first");
    const old = connect({ port, host: "127.0.0.1", ca: ca.ca.pem, servername: "localhost" });
    await new Promise<void>((r) => old.once("secureConnect", () => r()));
    rotate("second");
    await untilServed("second");
    // SIGHUP: the reloader's handler runs (vitest's worker would otherwise exit on it).
    const next = ca.leaf("third");
    copyFileSync(next.cert, certFile);
    copyFileSync(next.key, keyFile);
    expect(reloader.reload("SIGHUP")).toBe(true);
    expect(await servedCn(port, ca.ca.pem)).toBe("third");
    const echoed = new Promise<string>((r) => old.once("data", (b: Buffer) => r(b.toString())));
    old.write("still here");
    expect(await echoed).toBe("still here");
    expect(old.getPeerCertificate().subject.CN).toBe("first");
    old.end();
  });

  it("files that do not load keep the current certificate", async () => {
    const before = await servedCn(port, ca.ca.pem);
    writeFileSync(keyFile, "half written");
    expect(reloader.reload("SIGHUP")).toBe(false);
    expect(await servedCn(port, ca.ca.pem)).toBe(before);
  });
});
