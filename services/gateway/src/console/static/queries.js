// The reads and the one write (replay) the console makes, in terms of the broker's operations.
// Where variants differ (listSubscription's parameters and shape), this is the one place that knows.
import { ApiError, call, config, isUnknownOperation } from "./api.js";

export const groups = (signal) => call("admin/listGroup", {}, { signal });

export const version = (signal) => call("admin/getVersion", {}, { signal });

/** `{ nodeCount, transactionCount, latestBlock }` of one group. */
export const general = (groupId, signal) => call("admin/group/general", { groupId }, { signal });

/** Gateway instances (ip:port) that answer heartbeats now. */
export const gateways = (signal) => call("admin/listNodes", {}, { signal });

/** The group's chain nodes (indexers), each with its height and `nodeActive`; none is an empty list. */
export async function chainNodes(groupId, signal) {
  try {
    const page = await call("admin/node/nodeList", { groupId, pageNumber: 1, pageSize: 100 }, { signal });
    return page.pageData;
  } catch (err) {
    // nodeList answers the RPC failure when the group has no chain node at all.
    if (err instanceof ApiError && err.code === 200214) return [];
    throw err;
  }
}

/** One page of topics; `pageIndex` counts from 0 (rest/list). */
export const topics = (groupId, pageIndex, pageSize, signal) => call("rest/list", { groupId, pageIndex, pageSize }, { signal });

export const topicState = (groupId, topic, signal) => call("rest/state", { groupId, topic }, { signal });

/** One page of blocks (`{ total, pageData }`); page n holds heights (n−1)·size+1 … n·size. */
export const blocks = (groupId, pageNumber, pageSize, signal) =>
  call("admin/block/blockList", { groupId, pageNumber, pageSize }, { signal });

/** One page of a block's transactions, the latest block's without `blockNumber`; null when the block has none. */
export async function transactions(groupId, blockNumber, pageNumber, pageSize, signal) {
  try {
    return await call("admin/transaction/transList", { groupId, blockNumber, pageNumber, pageSize }, { signal });
  } catch (err) {
    // transList answers the RPC failure for a block that does not exist or holds nothing.
    if (err instanceof ApiError && err.code === 200214) return null;
    throw err;
  }
}

/** Dead-lettered subscriptions of a group, each with its head event, attempts and last error. */
export const deadLetters = (groupId, signal) => call("admin/deadLetters", { groupId }, { signal });

/** Releases one dead-lettered subscription (or all with null); answers the ids released. */
export const replay = (subscriptionId) => call("admin/replayDeadLetters", subscriptionId ? { subscriptionId } : {}, { method: "POST" });

/**
 * Every live subscription of a group as flat rows with the node that owns it and whether it is
 * dead-lettered. M and L list the nodes asked for: the live gateways plus any node a dead letter
 * names (a subscription outlives the gateway it was made on). E lists every owner by itself.
 */
export async function subscriptions(groupId, signal) {
  const { mount } = await config();
  const dead = await deadLetters(groupId, signal);
  let byNode;
  if (mount.variant === "E") {
    byNode = await call("admin/listSubscription", { groupId }, { signal });
  } else {
    const live = await gateways(signal);
    const nodes = [...new Set([...live, ...dead.map((d) => d.nodeInstance)])].join(",");
    const param = mount.variant === "M" ? "nodeIp" : "nodeInstances";
    byNode = await call("admin/listSubscription", { [param]: nodes, groupId }, { signal });
  }
  const deadIds = new Set(dead.map((d) => d.subscriptionId));
  const rows = [];
  for (const [node, records] of Object.entries(byNode)) {
    for (const r of Array.isArray(records) ? records : Object.values(records)) rows.push({ ...r, node, dead: deadIds.has(r.subscribeId) });
  }
  return rows.sort((a, b) => a.topicName.localeCompare(b.topicName) || a.subscribeId.localeCompare(b.subscribeId));
}

/** One page of a subscription's recorded delivery attempts (admin/deliveryAttempts). */
export const attempts = (subscriptionId, pageNumber, pageSize, signal) =>
  call("admin/deliveryAttempts", { subscriptionId, pageNumber, pageSize }, { signal });

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
