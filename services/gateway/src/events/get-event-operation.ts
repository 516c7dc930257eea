import { BrokerError, parseEventId, type Spelling, wireEvent } from "@evb/domain";
import type { EventStore } from "@evb/storage";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { storageFailure } from "../http/storage-failures.ts";

export interface GetEventDeps {
  events: EventStore;
  groups: ReadonlySet<string>;
  /** How extension names are shown (BRAND); absent: as stored, with `event-plus`. */
  spelling?: Spelling;
}

/** getEvent in the order of behaviour.md 7.5; the Event's shape per variant is `wireEvent`'s. */
export function getEventOperation(deps: GetEventDeps): Operation {
  return {
    path: "rest/getEvent",
    kind: "rest",
    variants: ["L", "M", "E"],
    // The height read failing is 200205 (below); the event read timing out is TRANSACTION_TIMEOUT in M and L.
    failureCode: storageFailure({}),
    async handle(ctx) {
      const id = ctx.params.required("eventId");
      const group = resolveGroup(ctx.params, deps.groups);
      const parsed = parseEventId(id);
      if (!parsed.ok) throw parsed.error;
      // Storage unreachable reads as height 0 in the original: 200205 (behaviour.md 3.1, 7.5 step 6).
      const height = await deps.events.height(group).catch(() => 0);
      if (height <= 0) throw BrokerError.of("HEIGHT_READ_FAILED");
      if (parsed.value.block > BigInt(height)) throw BrokerError.of("EVENT_ID_MISMATCH");
      const ev = await deps.events.get(group, id, Number(parsed.value.block));
      if (!ev) throw BrokerError.of("EVENT_ID_NOT_EXIST");
      return data(wireEvent(ev, ctx.variant, deps.spelling));
    },
  };
}
