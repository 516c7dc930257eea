import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Compares two equal-length digests; injectable so a test can see that it runs. */
export type DigestCompare = (a: Buffer, b: Buffer) => boolean;

/**
 * HTTP Basic credentials against the configured users (API_BASIC_AUTH). Every check does the
 * same work whatever was sent: the password is digested and compared in constant time against
 * the user's digest, or against a dummy one when the user is unknown (or the header is not
 * Basic at all). Without the dummy comparison an unknown user was answered measurably sooner
 * than a known one, which told a prober which user names exist.
 * Returns the user name when the credentials are right, else null.
 */
export function basicAuthenticator(
  users: ReadonlyMap<string, string>,
  compare: DigestCompare = timingSafeEqual,
): (authorization: string | undefined) => string | null {
  const digests = new Map([...users].map(([u, p]) => [u, digest(p)]));
  const dummy = digest(randomBytes(32).toString("hex"));
  return (authorization) => {
    const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization ?? "");
    const pair = m ? Buffer.from(m[1] as string, "base64").toString("utf8") : "";
    const sep = pair.indexOf(":");
    const user = sep > 0 ? pair.slice(0, sep) : "";
    const expected = digests.get(user);
    const same = compare(expected ?? dummy, digest(sep > 0 ? pair.slice(sep + 1) : pair));
    return expected !== undefined && same ? user : null;
  };
}

/** Parses `user:password[,user:password…]`; the first ':' separates user from password. */
export function parseBasicUsers(spec: string): Map<string, string> {
  const users = new Map<string, string>();
  for (const entry of spec
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const sep = entry.indexOf(":");
    // The entry is not echoed: it would put a password into the start-up error.
    if (sep <= 0 || sep === entry.length - 1) throw new Error(`entry ${users.size + 1} is not user:password`);
    users.set(entry.slice(0, sep), entry.slice(sep + 1));
  }
  return users;
}
