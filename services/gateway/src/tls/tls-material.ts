import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { PemFileError, readPemFile } from "@evb/runtime";
import { createSecureContext, type SecureContextOptions } from "node:tls";

/** Where the gateway's certificate, its key and the client CA are read from (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CA_FILE). */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
  caFile?: string | undefined;
}

/** The files read and checked: what a secure context is made of, and when the certificate expires. */
export interface TlsMaterial {
  context: SecureContextOptions;
  /** The certificate's subject and expiry, for the log line of a load or reload. */
  subject: string;
  notAfter: Date;
}

/** A certificate, key or CA file that cannot serve: one line naming the setting, the file and the fix. */
export class TlsMaterialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TlsMaterialError";
  }
}

/** readPemFile's refusal as this module's error, so a caller catches one kind. */
function readPem(setting: string, path: string, what: string): Buffer {
  try {
    return readPemFile(setting, path, what);
  } catch (err) {
    if (err instanceof PemFileError) throw new TlsMaterialError(err.message);
    throw err;
  }
}

function parsed<T>(setting: string, path: string, what: string, parse: () => T): T {
  try {
    return parse();
  } catch {
    throw new TlsMaterialError(`${setting} (${path}) is not ${what}; point it at one`);
  }
}

/**
 * Reads and checks the files: each readable, the certificate a PEM certificate, the key an
 * unencrypted PEM private key that belongs to it, the CA a PEM certificate; then builds a secure
 * context once so that anything else OpenSSL refuses is found here, at start or reload, and not at
 * a client's handshake. An expired certificate is not refused here (the caller warns): a gateway
 * that cannot start is worse than one a client can tell is out of date.
 */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const cert = readPem("TLS_CERT_FILE", files.certFile, "a PEM certificate");
  const key = readPem("TLS_KEY_FILE", files.keyFile, "the certificate's PEM private key");
  const ca = files.caFile === undefined ? undefined : readPem("TLS_CA_FILE", files.caFile, "a PEM file of CA certificates");
  const x509 = parsed("TLS_CERT_FILE", files.certFile, "a PEM certificate", () => new X509Certificate(cert));
  const privateKey: KeyObject = parsed("TLS_KEY_FILE", files.keyFile, "an unencrypted PEM private key", () => createPrivateKey(key));
  if (!x509.checkPrivateKey(privateKey)) {
    throw new TlsMaterialError(
      `TLS_KEY_FILE (${files.keyFile}) is not the key of TLS_CERT_FILE (${files.certFile}); use the key the certificate was made for`,
    );
  }
  if (ca !== undefined) parsed("TLS_CA_FILE", files.caFile as string, "a PEM CA certificate", () => new X509Certificate(ca));
  const context: SecureContextOptions = ca === undefined ? { cert, key } : { cert, key, ca };
  try {
    createSecureContext(context);
  } catch (err) {
    throw new TlsMaterialError(`TLS_CERT_FILE (${files.certFile}) with its key cannot serve TLS: ${(err as Error).message}`);
  }
  return { context, subject: x509.subject.replace(/\n/g, ", "), notAfter: new Date(x509.validTo) };
}
