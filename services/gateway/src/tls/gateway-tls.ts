import type { Server as TlsServer, TlsOptions, TLSSocket } from "node:tls";
import { errorMessage, type Logger } from "@evb/domain";
import type { ApiKeyLookup } from "../http/api-key-verifier.ts";
import { certificateIdentity, type TlsIdentity } from "./client-certificate.ts";
import { TlsReloader } from "./tls-reloader.ts";
import type { TlsSettings } from "./tls-settings.ts";

/** What the MQTT TLS listener is given: its server options, the reload to join and how a client certificate signs in. */
export interface MqttTls {
  options: TlsOptions;
  attach(server: TlsServer): void;
  identify(socket: TLSSocket): Promise<TlsIdentity>;
}

/**
 * The gateway's TLS: one certificate (reloaded by TlsReloader) for HTTPS on PORT and MQTT over TLS
 * on MQTT_TLS_PORT. A handshake has TLS_HANDSHAKE_TIMEOUT_MS to finish (Node's default is two
 * minutes, long enough for idle half-open connections to pile up); a failed one (a plain-text
 * client, a handshake cut off) is logged at debug and its socket destroyed, the server unharmed.
 */
export class GatewayTls {
  private readonly reloader: TlsReloader;
  private readonly settings: TlsSettings;
  private readonly logger: Logger;

  private constructor(settings: TlsSettings, logger: Logger) {
    this.settings = settings;
    this.logger = logger;
    this.reloader = new TlsReloader({
      files: { certFile: settings.TLS_CERT_FILE as string, keyFile: settings.TLS_KEY_FILE as string, caFile: settings.TLS_CA_FILE },
      pollMs: settings.TLS_RELOAD_POLL_MS,
      logger,
      now: Date.now,
    });
  }

  /** Null when TLS is off (no TLS_CERT_FILE); throws a TlsMaterialError (one line: which file, how to fix) when a file cannot serve. */
  static fromSettings(settings: TlsSettings, logger: Logger): GatewayTls | null {
    return settings.TLS_CERT_FILE === undefined ? null : new GatewayTls(settings, logger);
  }

  /** The HTTPS server's options (no client certificates asked for over HTTP). */
  https(): TlsOptions {
    return { ...this.reloader.context, handshakeTimeout: this.settings.TLS_HANDSHAKE_TIMEOUT_MS };
  }

  /** MQTT over TLS: client certificates asked for when TLS_CA_FILE is set, required with TLS_CLIENT_CERT_REQUIRED. */
  mqtt(keys: ApiKeyLookup | undefined): MqttTls {
    const ca = this.settings.TLS_CA_FILE !== undefined;
    return {
      options: {
        ...this.reloader.context,
        handshakeTimeout: this.settings.TLS_HANDSHAKE_TIMEOUT_MS,
        requestCert: ca,
        // Checked after the handshake (client-certificate.ts) unless every client must have one.
        rejectUnauthorized: ca && this.settings.TLS_CLIENT_CERT_REQUIRED,
      },
      attach: (server) => this.attach(server),
      identify: (socket) => (ca ? certificateIdentity(socket, keys, this.logger) : Promise.resolve(null)),
    };
  }

  /** Lets `server` take reloads, and logs its failed handshakes. */
  attach(server: TlsServer): void {
    this.reloader.attach(server);
    server.on("tlsClientError", (err, socket) => {
      this.logger.debug({ err: errorMessage(err), peer: socket.remoteAddress }, "TLS handshake failed");
      socket.destroy();
    });
  }

  start(): void {
    this.reloader.start();
  }

  close(): void {
    this.reloader.close();
  }
}
