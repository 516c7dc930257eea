import { type Stats, unwatchFile, watchFile } from "node:fs";
import type { Server as TlsServer } from "node:tls";
import { errorMessage, type Logger } from "@evb/domain";
import { readTlsMaterial, type TlsFiles, type TlsMaterial } from "./tls-material.ts";

/** How long before expiry a loaded certificate is warned about, ms (14 days). */
const EXPIRY_WARNING_MS = 14 * 86_400_000;

/**
 * The gateway's certificate, key and client CA, shared by its TLS listeners (HTTPS and MQTT over
 * TLS) and reloaded without a restart on SIGHUP or when a file's modification time or inode
 * changes (polled every `pollMs`). A reload swaps the servers' secure context
 * (tls.Server#setSecureContext): new handshakes get the new certificate, connections already
 * open keep theirs and stay up. Files that do not load (a half-written rotation, a key that does
 * not match yet) are logged and the current certificate stays; the next change or SIGHUP tries
 * again. Reading happens once at construction, so a bad file fails the start with its one line.
 */
export class TlsReloader {
  private readonly files: TlsFiles;
  private readonly pollMs: number;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly servers = new Set<TlsServer>();
  private material: TlsMaterial;
  private watching: Array<{ path: string; listener: (cur: Stats, prev: Stats) => void }> = [];
  private pending = false;
  private readonly onSignal = () => this.reload("SIGHUP");

  constructor(o: { files: TlsFiles; pollMs: number; logger: Logger; now: () => number }) {
    this.files = o.files;
    this.pollMs = o.pollMs;
    this.logger = o.logger;
    this.now = o.now;
    this.material = readTlsMaterial(this.files);
    this.warnIfExpiring();
  }

  /** The secure context's options as loaded now (a new listener starts with these). */
  get context(): TlsMaterial["context"] {
    return this.material.context;
  }

  /** Lets `server` take every later reload. */
  attach(server: TlsServer): void {
    this.servers.add(server);
  }

  /** Starts the watch on the files and SIGHUP. Idempotent. */
  start(): void {
    if (this.watching.length > 0) return;
    for (const path of [this.files.certFile, this.files.keyFile, this.files.caFile]) {
      if (path === undefined) continue;
      const listener = (cur: Stats, prev: Stats) => {
        if (cur.mtimeMs !== prev.mtimeMs || cur.ino !== prev.ino) this.soon();
      };
      // Not persistent: the watch alone never keeps the process up.
      watchFile(path, { interval: this.pollMs, persistent: false }, listener);
      this.watching.push({ path, listener });
    }
    process.on("SIGHUP", this.onSignal);
  }

  /** Reads the files again and, when they load, gives every attached server the new context. */
  reload(reason: string): boolean {
    let next: TlsMaterial;
    try {
      next = readTlsMaterial(this.files);
    } catch (err) {
      this.logger.warn({ err: errorMessage(err), reason }, "TLS certificate not reloaded; keeping the current one");
      return false;
    }
    this.material = next;
    for (const server of this.servers) server.setSecureContext(next.context);
    this.logger.info({ reason, subject: next.subject, notAfter: next.notAfter.toISOString() }, "TLS certificate reloaded");
    this.warnIfExpiring();
    return true;
  }

  close(): void {
    for (const w of this.watching) unwatchFile(w.path, w.listener);
    this.watching = [];
    process.off("SIGHUP", this.onSignal);
    this.servers.clear();
  }

  /** Changes to the certificate and key seen by one poll are one reload. */
  private soon(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      this.reload("file changed");
    });
  }

  private warnIfExpiring(): void {
    const left = this.material.notAfter.getTime() - this.now();
    if (left < EXPIRY_WARNING_MS) {
      this.logger.warn(
        { subject: this.material.subject, notAfter: this.material.notAfter.toISOString(), file: this.files.certFile },
        left <= 0
          ? "the TLS certificate has expired: clients that verify it refuse to connect; renew it"
          : "the TLS certificate expires soon; renew it",
      );
    }
  }
}
