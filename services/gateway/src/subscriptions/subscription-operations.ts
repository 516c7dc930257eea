import type { Operation } from "../http/operation.ts";
import { deadLetterOperations } from "./dead-letter-operations.ts";
import { deliveryAttemptsOperation } from "./delivery-attempts-operation.ts";
import { innerListSubscriptionOperation, listSubscriptionOperation } from "./list-subscription-operation.ts";
import { resendOperation } from "./resend-operation.ts";
import { subscriptionSettingsOperation } from "./settings-operation.ts";
import { subscribeOperation } from "./subscribe-operation.ts";
import { testDeliveryOperation } from "./test-delivery-operation.ts";
import type { SubscriptionDeps } from "./subscription-deps.ts";
import { unsubscribeOperation } from "./unsubscribe-operation.ts";

export type { SubscriptionDeps } from "./subscription-deps.ts";

/** Callback subscription: subscribe, unSubscribe, listSubscription and the dead-letter, attempt-log, resend, settings and test-delivery extensions. */
export function subscriptionOperations(deps: SubscriptionDeps): Operation[] {
  return [
    subscribeOperation(deps),
    unsubscribeOperation(deps),
    listSubscriptionOperation(deps),
    innerListSubscriptionOperation(deps),
    ...deadLetterOperations(deps),
    deliveryAttemptsOperation(deps),
    resendOperation(deps),
    subscriptionSettingsOperation(deps),
    testDeliveryOperation(deps),
  ];
}
