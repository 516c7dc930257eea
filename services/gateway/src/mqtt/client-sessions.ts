import { randomBytes } from "node:crypto";
import type { Logger } from "@evb/domain";
import { type ClientOwners, entryGateway, ownerEntry, type TakeoverMessage } from "./client-owners.ts";

/** A connection holding a client id: ends when another connection takes the id over. */
export interface ClientHolder {
  /** Ends the session (its will published, its state stored); resolves once it has ended. */
  takeOver(): Promise<void>;
}

export interface ClientSessionsOptions {
  /** This gateway's instance id: where other gateways send take-overs of its connections. */
  gatewayId: string;
  owners: ClientOwners;
  /** How long a CONNECT waits for another gateway to end the id's holder, ms (then it goes on). */
  takeoverWaitMs: number;
  /** How often the owner entries of the ids held here are kept alive, ms. */
  refreshEveryMs: number;
  logger: Logger;
}

interface Held {
  holder: ClientHolder;
  /** Whose the connection is (SessionKey.owner). */
  identity: string;
  /** `<gatewayId>/<token>\n<identity>`: this connection in the owners' store (ownerEntry). */
  owner: string;
}

/**
 * The client ids connected to this gateway, and through `ClientOwners` to every gateway. A CONNECT
 * with an id held anywhere ends the holder first (MQTT-3.1.4-3), and only then loads the stored
 * session, so the old one's last positions are read: a holder here is ended directly; the owner
 * entry in Redis names a holder on another gateway, which is asked over that gateway's channel
 * and answers once its connection has ended. That wait is bounded (`takeoverWaitMs`): a gateway
 * that is gone (no listener) or silent leaves its holder's positions as last stored (a second
 * old at most: at least once, never a gap). No lock is held while waiting: concurrent CONNECTs
 * with one id are ordered by the owner swaps, which one Redis connection sends in claim order.
 * Cleanup is keyed by connection: a late close of the old connection cannot release the new
 * one's id (the original's bug, protocols.md 3.2). An id held for another identity (another API
 * key, or in open mode another address) is not taken: the claim is refused before any holder is
 * ended, here or on another gateway (docs/security.md, "Sessions").
 */
export class ClientSessions {
  private readonly o: ClientSessionsOptions;
  private readonly byId = new Map<string, Held>();
  /** Take-overs this gateway asked for, by request id: resolved when the other gateway answers. */
  private readonly asked = new Map<string, () => void>();
  private timer?: NodeJS.Timeout;

  constructor(o: ClientSessionsOptions) {
    this.o = o;
  }

  async start(): Promise<void> {
    await this.o.owners.listen(this.o.gatewayId, (m) => void this.onMessage(m));
    this.timer ??= setInterval(() => void this.refresh(), this.o.refreshEveryMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.o.owners.close();
  }

  /**
   * Registers `holder` under `clientId` for `identity`, after ending the connection that held it,
   * here or on another gateway; false (nothing ended, nothing registered) when the id is held for
   * another identity. Throws when the owners' store cannot answer (the CONNECT is then refused).
   */
  async claim(clientId: string, holder: ClientHolder, identity: string): Promise<boolean> {
    const old = this.byId.get(clientId);
    if (old && old.holder !== holder && old.identity !== identity) return false;
    const owner = ownerEntry(`${this.o.gatewayId}/${randomBytes(6).toString("hex")}`, identity);
    const mine: Held = { holder, identity, owner };
    this.byId.set(clientId, mine);
    // Sent before any wait, so that the swaps of two CONNECTs here reach Redis in claim order.
    let swapped: Awaited<ReturnType<ClientOwners["swap"]>>;
    try {
      swapped = await this.o.owners.swap(clientId, owner, identity);
    } catch (err) {
      this.restore(clientId, mine, old);
      throw err;
    }
    if (swapped === "foreign") {
      this.restore(clientId, mine, old);
      return false;
    }
    if (old && old.holder !== holder) await old.holder.takeOver();
    const previous = swapped.previous;
    const gatewayId = previous ? entryGateway(previous) : "";
    if (previous && gatewayId && gatewayId !== this.o.gatewayId) await this.askToEnd(gatewayId, clientId, previous);
    return true;
  }

  /** A refused claim leaves the id as it was (unless a later claim here took it meanwhile). */
  private restore(clientId: string, mine: Held, old: Held | undefined): void {
    if (this.byId.get(clientId) !== mine) return;
    if (old) this.byId.set(clientId, old);
    else this.byId.delete(clientId);
  }

  /** Whether `holder` still holds `clientId` (it was not taken over meanwhile). */
  holds(clientId: string, holder: ClientHolder): boolean {
    return this.byId.get(clientId)?.holder === holder;
  }

  release(clientId: string, holder: ClientHolder): void {
    const held = this.byId.get(clientId);
    if (held?.holder !== holder) return;
    this.byId.delete(clientId);
    this.o.owners
      .release(clientId, held.owner)
      .catch((err: unknown) => this.o.logger.debug({ err, clientId }, "could not release an MQTT client id; it expires by itself"));
  }

  /** Asks `gatewayId` to end `owner`, and waits for its answer at most takeoverWaitMs. */
  private async askToEnd(gatewayId: string, clientId: string, owner: string): Promise<void> {
    const id = randomBytes(8).toString("hex");
    const { promise, resolve } = Promise.withResolvers<void>();
    this.asked.set(id, resolve);
    const timer = setTimeout(resolve, this.o.takeoverWaitMs);
    try {
      const listeners = await this.o.owners.send(gatewayId, { t: "ask", id, clientId, owner, from: this.o.gatewayId });
      // Nobody listens: that gateway is gone, and its connections with it.
      if (listeners === 0) return;
      await promise;
      if (this.asked.has(id))
        this.o.logger.warn(
          { clientId, gatewayId, waitedMs: this.o.takeoverWaitMs },
          "the gateway holding an MQTT client id did not answer its take-over in time; going on",
        );
    } finally {
      clearTimeout(timer);
      this.asked.delete(id);
    }
  }

  private async onMessage(m: TakeoverMessage): Promise<void> {
    if (m.t === "ended") {
      this.asked.get(m.id)?.();
      this.asked.delete(m.id);
      return;
    }
    const held = this.byId.get(m.clientId);
    // Only the connection named: a newer one that took the id here meanwhile stays.
    if (held?.owner === m.owner) await held.holder.takeOver();
    await this.o.owners
      .send(m.from, { t: "ended", id: m.id })
      .catch((err: unknown) => this.o.logger.warn({ err, clientId: m.clientId }, "could not answer an MQTT take-over"));
  }

  private async refresh(): Promise<void> {
    const held = [...this.byId].map(([id, h]): [string, string] => [id, h.owner]);
    if (held.length === 0) return;
    await this.o.owners
      .refresh(held)
      .catch((err: unknown) => this.o.logger.warn({ err }, "could not refresh the MQTT client ids held here"));
  }
}
