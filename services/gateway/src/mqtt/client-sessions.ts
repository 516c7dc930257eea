/** A connection holding a client id: ends when another connection takes the id over. */
export interface ClientHolder {
  /** Ends the session (its will published, its state stored); resolves once it has ended. */
  takeOver(): Promise<void>;
}

/**
 * The client ids connected to this gateway. A CONNECT with an id held here ends the holder first
 * (MQTT-3.1.4-3), and only then loads the stored session, so the old one's last positions are
 * read. Cleanup is keyed by connection: a late close of the old connection cannot release the
 * new one's id (the original's bug, protocols.md 3.2). Ids held on other gateways are not seen.
 */
export class ClientSessions {
  private readonly byId = new Map<string, ClientHolder>();

  /** Registers `holder` under `clientId`, after ending the connection that held it. */
  async claim(clientId: string, holder: ClientHolder): Promise<void> {
    const old = this.byId.get(clientId);
    this.byId.set(clientId, holder);
    if (old && old !== holder) await old.takeOver();
  }

  /** Whether `holder` still holds `clientId` (it was not taken over meanwhile). */
  holds(clientId: string, holder: ClientHolder): boolean {
    return this.byId.get(clientId) === holder;
  }

  release(clientId: string, holder: ClientHolder): void {
    if (this.byId.get(clientId) === holder) this.byId.delete(clientId);
  }
}
