import type { Mount } from "@evb/domain";
import { adminOperations } from "../../services/gateway/src/admin/admin-operations.ts";
import { batchOperation } from "../../services/gateway/src/console/batch-operation.ts";
import { metricsHistoryOperation } from "../../services/gateway/src/console/metrics-history-operation.ts";
import { subscriptionStatesOperation } from "../../services/gateway/src/console/subscription-states-operation.ts";
import { eventAdminOperations } from "../../services/gateway/src/events/event-admin-operations.ts";
import { getEventOperation } from "../../services/gateway/src/events/get-event-operation.ts";
import { publishBatchOperation } from "../../services/gateway/src/events/publish-batch-operation.ts";
import { publishOperation } from "../../services/gateway/src/events/publish-operation.ts";
import type { Operation } from "../../services/gateway/src/http/operation.ts";
import { subscriptionOperations } from "../../services/gateway/src/subscriptions/subscription-operations.ts";
import { topicOperations } from "../../services/gateway/src/topics/topic-operations.ts";

// Building the operations touches none of their dependencies; only handling a request does.
const none = {} as never;

/** Every operation the gateway serves over HTTP, as the OpenAPI document is built from them. */
export const DOCUMENTED_OPERATIONS: Operation[] = [
  ...topicOperations(none),
  publishOperation(none),
  publishBatchOperation(none, none),
  getEventOperation(none),
  ...eventAdminOperations(none),
  ...adminOperations({ buildInfo: none, groupList: ["1"], chain: none, registry: none, selfAddress: () => "" }),
  ...subscriptionOperations(none),
  subscriptionStatesOperation(none),
  metricsHistoryOperation(none),
  batchOperation(none),
];

/** The three variants at their default context paths. */
export const DOCUMENTED_MOUNTS: Mount[] = [
  { variant: "L", path: "/event-broker" },
  { variant: "M", path: "/event-m" },
  { variant: "E", path: "/event-e" },
];
