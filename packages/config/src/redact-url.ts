/** What a connection URL that cannot be parsed is shown as: it may hold a password anywhere. */
export const HIDDEN_URL = "(unparseable URL, hidden)";

/**
 * Query parameters that carry credentials: libpq's password/sslpassword, Redis's password,
 * tokens, API keys, signatures (`sig` of an Azure SAS URL, `signature`, `hmac`), sessions, JWTs
 * and function keys (`code` of an Azure Functions URL). Matched anywhere in the name: hiding a
 * harmless value is the cheaper mistake.
 */
const SECRET_PARAM = /pass|secret|token|auth|cred|key|sig|hmac|session|jwt|code/i;

/**
 * A connection URL as logs and errors show it: the password in the user part and the value of
 * every credential-like query parameter replaced by `***`, a fragment dropped. A URL that does
 * not parse, or that has an `@` past its host (a password with `/`, `?` or `#` in it that was
 * not percent-encoded spills there), is hidden entirely. The one redaction used for DATABASE_URL,
 * REDIS_URL and any other URL in start-up errors and progress lines, and for callback URLs
 * wherever the API or the console shows one (docs/security.md). With `user: true` (callback URLs,
 * where `https://TOKEN@host/` is a common way to pass a secret) the user name is hidden too.
 */
export function redactUrl(raw: string, opts: { user?: boolean } = {}): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return HIDDEN_URL;
  }
  if (`${u.pathname}${u.search}${u.hash}`.includes("@")) return HIDDEN_URL;
  if (u.password) u.password = "***";
  if (opts.user && u.username) u.username = "***";
  u.hash = "";
  const names = [...new Set(u.searchParams.keys())].filter((n) => SECRET_PARAM.test(n));
  for (const n of names) u.searchParams.set(n, "***");
  return u.toString();
}
