// The reads and the writes the console makes, in terms of the broker's operations.
// Reads go through admin/batch (api.js `read`): one request per refresh; writes each go alone.
import { ApiError, call, isUnknownOperation, read } from "./api.js";

export const groups = (signal) => read("admin/listGroup", {}, signal);

export const version = (signal) => read("admin/getVersion", {}, signal);

/** `{ nodeCount, transactionCount, latestBlock }` of one group. */
export const general = (groupId, signal) => read("admin/group/general", { groupId }, signal);

/** Gateway instances (ip:port) that answer heartbeats now. */
export const gateways = (signal) => read("admin/listNodes", {}, signal);

/** The group's chain nodes (indexers), each with its height and `nodeActive`; none is an empty list. */
export async function chainNodes(groupId, signal) {
  try {
    const page = await read("admin/node/nodeList", { groupId, pageNumber: 1, pageSize: 100 }, signal);
    return page.pageData;
  } catch (err) {
    // nodeList answers the RPC failure when the group has no chain node at all.
    if (err instanceof ApiError && err.code === 200214) return [];
    throw err;
  }
}

/** One page of topics; `pageIndex` counts from 0 (rest/list). */
export const topics = (groupId, pageIndex, pageSize, signal) => read("rest/list", { groupId, pageIndex, pageSize }, signal);

export const topicState = (groupId, topic, signal) => read("rest/state", { groupId, topic }, signal);

/** One page of blocks (`{ total, pageData }`); page n holds heights (n−1)·size+1 … n·size. */
export const blocks = (groupId, pageNumber, pageSize, signal) => read("admin/block/blockList", { groupId, pageNumber, pageSize }, signal);

/** One page of a block's transactions, the latest block's without `blockNumber`; null when the block has none. */
export async function transactions(groupId, blockNumber, pageNumber, pageSize, signal) {
  try {
    return await read("admin/transaction/transList", { groupId, blockNumber, pageNumber, pageSize }, signal);
  } catch (err) {
    // transList answers the RPC failure for a block that does not exist or holds nothing.
    if (err instanceof ApiError && err.code === 200214) return null;
    throw err;
  }
}

/**
 * The group's chart history (admin/metricsHistory): `{ intervalMs, now, available, samples }`,
 * samples `{ at, sealed, delivered, publishes }` of growing totals taken after `since` (epoch ms on
 * the gateway's clock; omitted: the last hour), oldest first; `now` is the gateway's clock.
 */
export const metricsHistory = (groupId, since, signal) => read("admin/metricsHistory", { groupId, since }, signal);

/** Dead-lettered subscriptions of a group, each with its head event, attempts and last error. */
export const deadLetters = (groupId, signal) => read("admin/deadLetters", { groupId }, signal);

/** Releases one dead-lettered subscription (or all with null); answers the ids released. */
export const replay = (subscriptionId) => call("admin/replayDeadLetters", subscriptionId ? { subscriptionId } : {}, { method: "POST" });

/**
 * Every live subscription of a group with where its delivery stands (admin/subscriptionStates:
 * callbacks read from their rows with state, next attempt, last error; live STOMP/MQTT ones as
 * `live`), sorted by topic. One read, so a refresh of the page is one batched request.
 */
export async function subscriptions(groupId, signal) {
  const rows = await read("admin/subscriptionStates", { groupId }, signal);
  return rows.sort((a, b) => a.topicName.localeCompare(b.topicName) || a.subscriptionId.localeCompare(b.subscriptionId));
}

/** Creates a callback subscription (rest/subscribe), with an alert URL when one is given; answers its id. */
export const subscribe = (groupId, topic, url, alertUrl = "") =>
  call("rest/subscribe", { groupId, topic, url, ...(alertUrl ? { alertUrl } : {}) }, { method: "POST" });

export const unsubscribe = (subscriptionId) => call("rest/unSubscribe", { subscriptionId }, { method: "POST" });

/**
 * Changes a subscription's own settings (admin/subscriptionSettings): `{ paused: "true" }`,
 * `{ rotateSecret: "true" }`, `{ alertUrl: "" }` (no alerts)…; answers the settings, with the new secret this once after a rotation.
 */
export const subscriptionSettings = (subscriptionId, change) =>
  call("admin/subscriptionSettings", { subscriptionId, ...change }, { method: "POST" });

/** Publishes `content` to `topic` (rest/publish); answers the SendResult. */
export const publish = (groupId, topic, content) => call("rest/publish", { groupId, topic, content }, { method: "POST" });

/** Replays a live subscription from a time (epoch ms) or an eventId (admin/replayDeadLetters with fromTime/fromEventId). */
export const replayFrom = (subscriptionId, from) =>
  call("admin/replayDeadLetters", { subscriptionId, fromTime: from.time, fromEventId: from.eventId }, { method: "POST" });

/** One page of a group's events, newest first (admin/events): by topic or pattern, eventId, time range (epoch ms). */
export const events = (groupId, search, pageNumber, pageSize, signal) =>
  read("admin/events", { groupId, ...search, pageNumber, pageSize }, signal);

/** One event's deliveries: each matching subscription with the event's state there and its attempts at it. */
export const eventDeliveries = (groupId, eventId, signal) => read("admin/eventDeliveries", { groupId, eventId, pageSize: 100 }, signal);

/** Sends one event again to one subscription (admin/resendEvent); answers `{ resend }`. */
export const resend = (subscriptionId, eventId) => call("admin/resendEvent", { subscriptionId, eventId }, { method: "POST" });

/** One page of a subscription's recorded delivery attempts (admin/deliveryAttempts). */
export const attempts = (subscriptionId, pageNumber, pageSize, signal) =>
  read("admin/deliveryAttempts", { subscriptionId, pageNumber, pageSize }, signal);

/**
 * Whether this gateway records delivery attempts: the operation exists when asking for a
 * subscription that does not exist answers anything but "no such operation".
 */
export async function hasAttempts() {
  try {
    await attempts("00000000-0000-0000-0000-000000000000", 1, 1);
    return true;
  } catch (err) {
    return !isUnknownOperation(err);
  }
}
