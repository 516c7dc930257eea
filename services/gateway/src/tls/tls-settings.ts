import { z } from "zod";
import { boolVar, intVar } from "@evb/config";

/** An optional file path: empty or unset means none. */
function fileVar(fix: string) {
  return z.preprocess((v) => (v === "" ? undefined : v), z.string().optional()).describe(fix);
}

/**
 * The gateway's own listeners over TLS (docs/security.md, "TLS on the gateway's listeners"): with
 * TLS_CERT_FILE and TLS_KEY_FILE set, PORT serves HTTPS (so STOMP and MQTT over WebSocket are
 * `wss://`) and MQTT_TLS_PORT, when set, serves MQTT over TLS.
 */
export const tlsEnv = {
  TLS_CERT_FILE: fileVar(
    "a PEM file with the gateway's certificate (its chain after it); with TLS_KEY_FILE, PORT serves HTTPS; unset: plain HTTP",
  ),
  TLS_KEY_FILE: fileVar("a PEM file with the private key of TLS_CERT_FILE (unencrypted); set both or neither"),
  TLS_CA_FILE: fileVar(
    "a PEM file of the CA(s) whose client certificates MQTT over TLS accepts (mutual TLS); unset: no client certificates asked for",
  ),
  TLS_CLIENT_CERT_REQUIRED: boolVar(
    false,
    "true to refuse an MQTT TLS client without a certificate from TLS_CA_FILE; false: one without a certificate signs in with CONNECT's credentials",
  ),
  TLS_HANDSHAKE_TIMEOUT_MS: intVar(
    10_000,
    500,
    120_000,
    "milliseconds a client has to finish its TLS handshake before its connection is cut, 500–120000",
  ),
  TLS_RELOAD_POLL_MS: intVar(
    5_000,
    100,
    600_000,
    "milliseconds between looks at the certificate and key files' modification times (a change reloads them; so does SIGHUP), 100–600000",
  ),
  MQTT_TLS_PORT: z
    .preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(0).max(65535).optional())
    .describe(
      "the TCP port MQTT over TLS listens on, at HOST, 0–65535 (0 picks a free one; 8883 is usual); needs TLS_CERT_FILE; unset: none",
    ),
};

export type TlsSettings = z.infer<z.ZodObject<typeof tlsEnv>>;

/** The settings' combinations that cannot work, each as a fix-it line (empty: none). */
export function tlsSettingsProblems(s: TlsSettings): string[] {
  const problems: string[] = [];
  if ((s.TLS_CERT_FILE === undefined) !== (s.TLS_KEY_FILE === undefined)) {
    problems.push("TLS_CERT_FILE and TLS_KEY_FILE: set both (the certificate and its key) or neither");
  }
  const on = s.TLS_CERT_FILE !== undefined;
  if (!on && s.MQTT_TLS_PORT !== undefined) problems.push("MQTT_TLS_PORT needs TLS_CERT_FILE and TLS_KEY_FILE; set them or unset it");
  if (!on && s.TLS_CA_FILE !== undefined) problems.push("TLS_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE; set them or unset it");
  if (s.TLS_CLIENT_CERT_REQUIRED && s.TLS_CA_FILE === undefined) {
    problems.push("TLS_CLIENT_CERT_REQUIRED=true needs TLS_CA_FILE (the CA client certificates must come from); set it or turn this off");
  }
  return problems;
}
