import { redactUrl } from "@evb/config";
import { type Caller, ownerId } from "../http/caller-address.ts";

/**
 * A callback URL as the API shows it: whole only to the API key that owns the subscription (its
 * identity is proven); to anyone else, its user, password and credential-like query values
 * hidden by the one redaction the logs and start-up messages use (docs/security.md). An address
 * is no proof of identity (any process behind it shares it), so without keys nobody sees it whole.
 */
export function shownCallbackUrl(url: string, owner: string, caller: Caller): string {
  return caller.keyId !== null && ownerId(caller) === owner ? url : redactUrl(url, { user: true });
}
