import type { TLSSocket } from "node:tls";
import { errorMessage, type Logger } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import type { ApiKeyLookup } from "../http/api-key-verifier.ts";

/** An API key's id, as `npm run keys` makes them (the 12 hex digits of `evbk_<id>_<secret>`). */
const KEY_ID = /^[0-9a-f]{12}$/;

/** What an MQTT TLS client's certificate, as the handshake left it, makes of the connection. */
export type CertificateDecision =
  /** No certificate: the connection signs in with CONNECT's credentials, as over plain TCP. */
  | { kind: "none" }
  /** A certificate TLS_CA_FILE does not vouch for, or one naming no key while keys are on: cut. */
  | { kind: "refused"; reason: string }
  /** A valid certificate with keys off: it admitted the connection; CONNECT's credentials still count. */
  | { kind: "verified" }
  /** A valid certificate whose subject CN is this API key's id: signed in as that key, its roles apply. */
  | { kind: "key"; keyId: string };

/** What the handshake says about the peer's certificate. */
export interface PeerCertificateView {
  presented: boolean;
  authorized: boolean;
  authorizationError?: string | undefined;
  commonName?: string | undefined;
}

/**
 * Mutual TLS for MQTT (docs/security.md, "Client certificates"). Only a certificate that
 * TLS_CA_FILE's CA signed counts. With API_KEYS on, its subject CN must be a key's id and the
 * connection is that key (the secret is not needed: the CA vouched, as it would for the key's
 * owner); with keys off a certificate never replaces the credentials CONNECT must carry, so
 * turning client certificates on never lets in anyone who was refused before.
 */
export function decideCertificate(peer: PeerCertificateView, keysOn: boolean): CertificateDecision {
  if (!peer.presented) return { kind: "none" };
  if (!peer.authorized) return { kind: "refused", reason: `client certificate not trusted (${peer.authorizationError ?? "unverified"})` };
  if (!keysOn) return { kind: "verified" };
  const cn = peer.commonName ?? "";
  if (!KEY_ID.test(cn)) return { kind: "refused", reason: "client certificate's CN is not an API key id (12 hex digits)" };
  return { kind: "key", keyId: cn };
}

/** The identity a connection starts with: a key, none (CONNECT decides), or refused. */
export type TlsIdentity = { key: ApiKeyRecord | null } | null | "refused";

/** Reads the socket's certificate and, for a key, looks the key up: revoked, unknown or unreadable is refused. */
export async function certificateIdentity(socket: TLSSocket, keys: ApiKeyLookup | undefined, logger: Logger): Promise<TlsIdentity> {
  const cert = socket.getPeerCertificate();
  const cn = cert?.subject?.CN;
  const decision = decideCertificate(
    {
      presented: cert !== null && cert !== undefined && Object.keys(cert).length > 0,
      authorized: socket.authorized,
      authorizationError: socket.authorizationError === undefined ? undefined : String(socket.authorizationError),
      commonName: Array.isArray(cn) ? undefined : cn,
    },
    keys !== undefined,
  );
  if (decision.kind === "none" || decision.kind === "verified") return null;
  if (decision.kind === "refused") {
    logger.info({ reason: decision.reason }, "MQTT TLS client certificate refused");
    return "refused";
  }
  try {
    const found = await (keys as ApiKeyLookup).find(decision.keyId);
    if (found && found.record.revokedAt === null) return { key: found.record };
    logger.info({ keyId: decision.keyId }, "MQTT TLS client certificate names no live API key; refused");
  } catch (err) {
    logger.warn({ err: errorMessage(err), keyId: decision.keyId }, "the API key of an MQTT client certificate cannot be read now; refused");
  }
  return "refused";
}
