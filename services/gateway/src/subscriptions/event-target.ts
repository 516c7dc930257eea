import { BrokerError } from "@evb/domain";
import type { EventReads, FoundEvent } from "@evb/storage";
import { eventIdFilter } from "../events/event-search.ts";

/** The event `eventId` names in the group, checked as getEvent checks it; 100303 when there is none. */
export async function eventOfGroup(events: Pick<EventReads, "event">, groupId: string, eventId: string): Promise<FoundEvent> {
  const target = eventIdFilter(eventId);
  const ev = target.height < 1 ? null : await events.event(groupId, target.id, target.height);
  if (!ev) throw BrokerError.of("EVENT_ID_NOT_EXIST");
  return ev;
}
