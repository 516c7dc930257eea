import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A certificate and its key as files, and the certificate's PEM. */
export interface CertFiles {
  cert: string;
  key: string;
  pem: string;
}

function openssl(cwd: string, args: string[]): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * Certificates made by the test with `openssl` (P-256 keys: quick to make), in a temp dir of
 * their own: a CA and, signed by it, what `leaf` asks for. `days` below 0 makes one already
 * expired (openssl sets notAfter before now).
 */
export class TestCa {
  readonly dir: string;
  readonly ca: CertFiles;
  private n = 0;

  constructor(name = "evb-test-ca") {
    this.dir = mkdtempSync(join(tmpdir(), "evb-certs-"));
    openssl(
      this.dir,
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"].concat([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        `/CN=${name}`,
      ]),
    );
    this.ca = { cert: join(this.dir, "ca.pem"), key: join(this.dir, "ca.key"), pem: readFileSync(join(this.dir, "ca.pem"), "utf8") };
  }

  /** A certificate for `cn`, for a server (SAN 127.0.0.1 and localhost) or a client. */
  leaf(cn: string, o: { days?: number; server?: boolean } = {}): CertFiles {
    const base = `leaf-${++this.n}`;
    openssl(
      this.dir,
      ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"].concat([
        "-keyout",
        `${base}.key`,
        "-out",
        `${base}.csr`,
        "-subj",
        `/CN=${cn}`,
      ]),
    );
    const ext =
      o.server === false ? "extendedKeyUsage=clientAuth\n" : "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n";
    writeFileSync(join(this.dir, `${base}.ext`), ext);
    openssl(
      this.dir,
      ["x509", "-req", "-in", `${base}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
        "-days",
        String(o.days ?? 1),
        "-extfile",
        `${base}.ext`,
        "-out",
        `${base}.pem`,
      ]),
    );
    return {
      cert: join(this.dir, `${base}.pem`),
      key: join(this.dir, `${base}.key`),
      pem: readFileSync(join(this.dir, `${base}.pem`), "utf8"),
    };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
