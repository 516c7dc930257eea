import { adminOperationSchemas } from "../admin/admin-operations.schema.ts";
import { consoleOperationSchemas } from "../console/console-operations.schema.ts";
import { eventAdminOperationSchemas } from "../events/event-admin-operations.schema.ts";
import { eventOperationSchemas } from "../events/event-operations.schema.ts";
import { deliveryAttemptsOperationSchemas } from "../subscriptions/delivery-attempts-operation.schema.ts";
import { settingsOperationSchemas, testDeliveryOperationSchemas } from "../subscriptions/settings-operation.schema.ts";
import { subscriptionOperationSchemas } from "../subscriptions/subscription-operations.schema.ts";
import { topicOperationSchemas } from "../topics/topic-operations.schema.ts";
import type { OperationSchemas } from "./operation-schema.ts";

/** Every operation's schema by path, from the `*.schema.ts` files beside the operations. */
export const OPERATION_SCHEMAS: OperationSchemas = {
  ...topicOperationSchemas,
  ...eventOperationSchemas,
  ...adminOperationSchemas,
  ...subscriptionOperationSchemas,
  ...deliveryAttemptsOperationSchemas,
  ...settingsOperationSchemas,
  ...testDeliveryOperationSchemas,
  ...eventAdminOperationSchemas,
  ...consoleOperationSchemas,
};
