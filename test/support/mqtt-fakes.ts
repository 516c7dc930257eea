import { type ClientOwners, entryIdentity, type TakeoverMessage } from "../../services/gateway/src/mqtt/client-owners.ts";

/**
 * The owners' store of several gateways in memory (what Redis is to them): one owner per client
 * id, one listener per gateway. `silent` drops every message to the gateways named (a gateway that
 * hangs); `down` makes every call throw (Redis gone).
 */
export class MemoryOwnerStore {
  readonly owners = new Map<string, string>();
  private readonly listeners = new Map<string, (m: TakeoverMessage) => void>();
  readonly silent = new Set<string>();
  down = false;

  /** The ClientOwners one gateway sees. */
  view(): ClientOwners {
    const check = () => {
      if (this.down) throw new Error("store down");
    };
    return {
      swap: async (id, owner, identity) => {
        check();
        const previous = this.owners.get(id) ?? null;
        const holder = previous === null ? null : entryIdentity(previous);
        if (holder !== null && holder !== identity) return "foreign";
        this.owners.set(id, owner);
        return { previous };
      },
      release: async (id, owner) => {
        check();
        if (this.owners.get(id) === owner) this.owners.delete(id);
      },
      refresh: async () => check(),
      send: async (gatewayId, m) => {
        check();
        const l = this.listeners.get(gatewayId);
        if (!l) return 0;
        if (!this.silent.has(gatewayId)) queueMicrotask(() => l(m));
        return 1;
      },
      listen: async (gatewayId, onMessage) => {
        this.listeners.set(gatewayId, onMessage);
      },
      close: async () => {},
    };
  }
}
