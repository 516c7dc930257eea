import { randomBytes } from "node:crypto";
import type { IConnectPacket } from "mqtt-packet";
import type { CallerChecks } from "../http/access-control.ts";
import { ownerId } from "../http/caller-address.ts";
import type { SessionLogin } from "../sessions/session-key.ts";
import { loginAuthorizations } from "../stomp/connect-frame.ts";
import type { ClientHolder } from "./client-sessions.ts";
import { connectTerms, type SessionTerms } from "./mqtt-connect.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import { type ConnackProperties, Reason, type Refusal } from "./mqtt-replies.ts";
import { receiveMaximum } from "./publish-flow.ts";
import type { StoredSession } from "./session-store.ts";

/** An accepted CONNECT: its terms, who logged in, the stored session to resume (null: none). */
export interface Accepted {
  terms: SessionTerms;
  login: SessionLogin;
  stored: StoredSession | null;
}

const FOREIGN_ID: Refusal = { reason: Reason.CLIENT_ID_INVALID, message: "this client id belongs to another identity" };

/** Whether a stored session may be resumed (or discarded) by `identity`: its own, or one stored without an owner. */
export function mayTakeSession(stored: StoredSession | null, identity: string): boolean {
  return stored?.owner === undefined || stored.owner === identity;
}

/**
 * A CONNECT, checked in order (protocols.md 3.2): its terms (client id, group), the credentials
 * when access control is on (the username and password as STOMP's login and passcode: Basic
 * user:password, or the password as an API key; a WebSocket handshake's Authorization header
 * counts as logged in), then whose the client id is: one held or stored for another identity (API
 * key, else address: docs/security.md, "Sessions") is refused (0x85; 3.1.1: 2, identifier
 * rejected) before anything is taken; then the client id is taken over from the connection holding
 * it (on this gateway or another), and the stored session is discarded (clean) or loaded. A store that cannot
 * answer refuses the CONNECT (0x88) rather than starting empty, which would skip the events missed
 * meanwhile, or letting two connections run with one id.
 */
export async function acceptConnect(
  p: IConnectPacket,
  deps: MqttDeps,
  identity: SessionLogin | null,
  holder: ClientHolder,
  remoteIp: string,
): Promise<Accepted | Refusal> {
  const terms = connectTerms(p, deps.groups, deps.limits, () => `evb-${randomBytes(9).toString("base64url")}`);
  if ("reason" in terms) return terms;
  let who = identity ?? (deps.checks.required ? null : { key: null });
  if (!who) {
    const login = await logIn(deps.checks, p.username ?? "", p.password?.toString("utf8") ?? "");
    if ("reason" in login) return login;
    who = login;
  }
  const owner = ownerId({ address: remoteIp, keyId: who.key?.id ?? null });
  try {
    // Before the take-over: a stranger ends no holder and discards no session.
    if (!mayTakeSession(await deps.store.load(terms.clientId), owner)) return FOREIGN_ID;
    if (!(await deps.clients.claim(terms.clientId, holder, owner))) return FOREIGN_ID;
    let stored: StoredSession | null = null;
    if (terms.clean) await deps.store.drop(terms.clientId);
    else stored = await deps.store.load(terms.clientId);
    if (!mayTakeSession(stored, owner)) {
      deps.clients.release(terms.clientId, holder);
      return FOREIGN_ID;
    }
    return { terms, login: who, stored };
  } catch (err) {
    deps.logger.warn({ err, clientId: terms.clientId }, "the MQTT session store did not answer; CONNECT refused");
    deps.clients.release(terms.clientId, holder);
    return { reason: Reason.SERVER_UNAVAILABLE, message: "sessions cannot be read now; connect again later" };
  }
}

/** The first reading of the credentials the access settings accept, or why none is. */
async function logIn(checks: CallerChecks, username: string, password: string): Promise<SessionLogin | Refusal> {
  const tries = loginAuthorizations(username, password);
  if (tries.length === 0)
    return { reason: Reason.NOT_AUTHORIZED, message: "credentials required: username and password, or an API key as password" };
  for (const authorization of tries) {
    const r = await checks.authorization(authorization);
    if (r.ok) return { key: r.key, authorization };
    if (r.unavailable) return { reason: Reason.SERVER_UNAVAILABLE, message: "credentials cannot be checked now; connect again later" };
  }
  return { reason: Reason.BAD_CREDENTIALS, message: "login or password is wrong" };
}

/** What an MQTT 5 CONNACK tells the client about this server. */
export function connackProperties(terms: SessionTerms, limits: MqttDeps["limits"]): ConnackProperties {
  const props: ConnackProperties = {
    maximumQoS: 1,
    retainAvailable: false,
    maximumPacketSize: limits.maxPacketBytes,
    receiveMaximum: receiveMaximum(limits.maxPendingPublishes),
    wildcardSubscriptionAvailable: true,
    subscriptionIdentifiersAvailable: false,
    sharedSubscriptionAvailable: false,
  };
  if (terms.assigned) props.assignedClientIdentifier = terms.clientId;
  if (terms.expiryCapped) props.sessionExpiryInterval = Math.floor(terms.expiryMs / 1000);
  return props;
}
