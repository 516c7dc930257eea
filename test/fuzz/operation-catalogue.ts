import type { Variant } from "@evb/domain";

/** What a parameter holds, which decides the hostile values tried for it. */
export type ParamKind = "topic" | "pattern" | "content" | "int" | "eventId" | "url" | "subscriptionId" | "group" | "nodes" | "text";

export interface ParamSpec {
  name: string;
  kind: ParamKind;
}

export interface OperationSpec {
  /** Relative to the mount, as in services/gateway/src/http/operation.ts. */
  path: string;
  variants: readonly Variant[];
  params: readonly ParamSpec[];
  /** Writes to the ledger, the topic table, the subscription table or Kafka when it succeeds. */
  writes: boolean;
}

const ALL: readonly Variant[] = ["L", "M", "E"];
const group: ParamSpec = { name: "groupId", kind: "group" };
const topic: ParamSpec = { name: "topic", kind: "topic" };
const paging: ParamSpec[] = [
  { name: "pageNumber", kind: "int" },
  { name: "pageSize", kind: "int" },
];

/**
 * Every operation the gateway serves, with the parameters it reads (behaviour.md 1.5, 9). The
 * unit test beside this file checks the list against the operations the gateway builds, so an
 * operation added there and not here fails the build rather than going unfuzzed.
 */
export const OPERATIONS: readonly OperationSpec[] = [
  { path: "rest/open", variants: ALL, params: [topic, group], writes: true },
  { path: "rest/close", variants: ALL, params: [topic, group], writes: false },
  { path: "rest/exist", variants: ALL, params: [topic, group], writes: false },
  { path: "rest/state", variants: ALL, params: [topic, group], writes: false },
  {
    path: "rest/list",
    variants: ALL,
    params: [{ name: "pageIndex", kind: "int" }, { name: "pageSize", kind: "int" }, group],
    writes: false,
  },
  {
    path: "rest/publish",
    variants: ALL,
    params: [topic, { name: "content", kind: "content" }, group, { name: "event-format", kind: "text" }, { name: "event-x", kind: "text" }],
    writes: true,
  },
  { path: "rest/getEvent", variants: ALL, params: [{ name: "eventId", kind: "eventId" }, group], writes: false },
  {
    path: "rest/subscribe",
    variants: ["M", "E"],
    params: [{ name: "topic", kind: "pattern" }, { name: "url", kind: "url" }, { name: "subscriptionId", kind: "subscriptionId" }, group],
    writes: true,
  },
  { path: "rest/unSubscribe", variants: ["M", "E"], params: [{ name: "subscriptionId", kind: "subscriptionId" }], writes: true },
  { path: "admin/getVersion", variants: ALL, params: [], writes: false },
  { path: "admin/listGroup", variants: ALL, params: [], writes: false },
  { path: "admin/listNodes", variants: ALL, params: [], writes: false },
  { path: "admin/group/general", variants: ALL, params: [group], writes: false },
  {
    path: "admin/transaction/transList",
    variants: ALL,
    params: [...paging, { name: "blockNumber", kind: "int" }, { name: "transactionHash", kind: "text" }, group],
    writes: false,
  },
  {
    path: "admin/block/blockList",
    variants: ALL,
    params: [...paging, { name: "blockNumber", kind: "int" }, { name: "pkHash", kind: "text" }, group],
    writes: false,
  },
  { path: "admin/node/nodeList", variants: ALL, params: [...paging, { name: "nodeName", kind: "text" }, group], writes: false },
  { path: "admin/blockchaininfo", variants: ["E"], params: [group], writes: false },
  { path: "admin/validateGroupId", variants: ["L"], params: [group], writes: false },
  { path: "admin/getContractContext", variants: ["L"], params: [group], writes: false },
  {
    path: "admin/listSubscription",
    variants: ALL,
    params: [{ name: "nodeIp", kind: "nodes" }, { name: "nodeInstances", kind: "nodes" }, group],
    writes: false,
  },
  { path: "admin/innerListSubscription", variants: ALL, params: [group], writes: false },
  { path: "admin/deadLetters", variants: ALL, params: [group], writes: false },
  {
    path: "admin/replayDeadLetters",
    variants: ALL,
    params: [
      { name: "subscriptionId", kind: "subscriptionId" },
      { name: "fromTime", kind: "text" },
      { name: "fromEventId", kind: "eventId" },
    ],
    writes: true,
  },
  {
    path: "admin/resendEvent",
    variants: ALL,
    params: [
      { name: "subscriptionId", kind: "subscriptionId" },
      { name: "eventId", kind: "eventId" },
    ],
    writes: true,
  },
  {
    path: "admin/testDelivery",
    variants: ALL,
    params: [{ name: "subscriptionId", kind: "subscriptionId" }],
    writes: false,
  },
  {
    path: "admin/subscriptionSettings",
    variants: ALL,
    params: [
      { name: "subscriptionId", kind: "subscriptionId" },
      { name: "maxRate", kind: "text" },
      { name: "retryMaxAttempts", kind: "int" },
      { name: "retryBaseMs", kind: "int" },
      { name: "retryMaxMs", kind: "int" },
      { name: "deliveryWindow", kind: "int" },
      { name: "paused", kind: "text" },
      { name: "rotateSecret", kind: "text" },
      { name: "secretGraceMs", kind: "int" },
      { name: "dropSecret", kind: "text" },
    ],
    writes: true,
  },
  {
    path: "admin/events",
    variants: ALL,
    params: [
      { name: "topic", kind: "pattern" },
      { name: "eventId", kind: "eventId" },
      { name: "from", kind: "text" },
      { name: "to", kind: "text" },
      group,
      ...paging,
    ],
    writes: false,
  },
  { path: "admin/eventDeliveries", variants: ALL, params: [{ name: "eventId", kind: "eventId" }, group, ...paging], writes: false },
  {
    path: "admin/deliveryAttempts",
    variants: ALL,
    params: [
      { name: "subscriptionId", kind: "subscriptionId" },
      { name: "pageNumber", kind: "int" },
      { name: "pageSize", kind: "int" },
    ],
    writes: false,
  },
];

/** Paths under a mount that are no operation anywhere (behaviour.md 1.4). */
export const UNKNOWN_PATHS = ["rest/foo", "admin/foo", "rest/open.json", "admin/group", "rest", "", "REST/OPEN", "rest/Open", "rest//open"];
