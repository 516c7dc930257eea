import { describe, expect, it } from "vitest";
import { decideCertificate } from "./client-certificate.ts";
import { tlsSettingsProblems } from "./tls-settings.ts";

describe("decideCertificate (mutual TLS for MQTT)", () => {
  const valid = { presented: true, authorized: true, commonName: "0123456789ab" };

  it("no certificate leaves the sign-in to CONNECT", () => {
    expect(decideCertificate({ presented: false, authorized: false }, true)).toEqual({ kind: "none" });
  });
  it("a certificate the CA does not vouch for is refused, keys on or off", () => {
    for (const keysOn of [true, false]) {
      const d = decideCertificate({ ...valid, authorized: false, authorizationError: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" }, keysOn);
      expect(d).toEqual({ kind: "refused", reason: expect.stringContaining("UNABLE_TO_VERIFY_LEAF_SIGNATURE") });
    }
  });
  it("with keys on, a valid certificate's CN is the key's id", () => {
    expect(decideCertificate(valid, true)).toEqual({ kind: "key", keyId: "0123456789ab" });
  });
  it("with keys on, a valid certificate whose CN is no key id is refused", () => {
    for (const commonName of ["alice", "0123456789AB", "evbk_0123456789ab_x", undefined]) {
      expect(decideCertificate({ ...valid, commonName }, true).kind).toBe("refused");
    }
  });
  it("with keys off, a valid certificate replaces no credentials", () => {
    expect(decideCertificate(valid, false)).toEqual({ kind: "verified" });
  });
});

describe("tlsSettingsProblems", () => {
  const off = { TLS_CLIENT_CERT_REQUIRED: false, TLS_HANDSHAKE_TIMEOUT_MS: 10_000, TLS_RELOAD_POLL_MS: 5_000 };
  const on = { ...off, TLS_CERT_FILE: "/c.pem", TLS_KEY_FILE: "/k.pem" };

  it("accepts TLS off and TLS on with MQTT over TLS and client certificates", () => {
    expect(tlsSettingsProblems(off)).toEqual([]);
    expect(tlsSettingsProblems({ ...on, MQTT_TLS_PORT: 8883, TLS_CA_FILE: "/ca.pem", TLS_CLIENT_CERT_REQUIRED: true })).toEqual([]);
  });
  it("names each setting that is missing its partner", () => {
    expect(tlsSettingsProblems({ ...off, TLS_CERT_FILE: "/c.pem" })).toEqual([expect.stringContaining("set both")]);
    expect(tlsSettingsProblems({ ...off, TLS_KEY_FILE: "/k.pem" })).toEqual([expect.stringContaining("set both")]);
    expect(tlsSettingsProblems({ ...off, MQTT_TLS_PORT: 8883 })).toEqual([expect.stringMatching(/^MQTT_TLS_PORT needs TLS_CERT_FILE/)]);
    expect(tlsSettingsProblems({ ...off, TLS_CA_FILE: "/ca.pem" })).toEqual([expect.stringMatching(/^TLS_CA_FILE needs/)]);
    expect(tlsSettingsProblems({ ...on, TLS_CLIENT_CERT_REQUIRED: true })).toEqual([expect.stringMatching(/needs TLS_CA_FILE/)]);
  });
});
