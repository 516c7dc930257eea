import { describe, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type {
  AdminPage,
  BatchItemResult,
  BlockchainInfo,
  BlockRecord,
  BrokerEvent,
  ContractContext,
  DeadLetter,
  DeliveryAttempt,
  EventDelivery,
  GroupGeneral,
  ListedEvent,
  NodeRecord,
  ResendReceipt,
  SendResult,
  SubscriptionRecord,
  SubscriptionRecordE,
  SubscriptionSettings,
  TopicInfoE,
  TopicPage,
  TopicStateL,
  TopicStateM,
  TransactionRecord,
  VersionInfo,
} from "evb-client";
import type {
  adminPageSchema,
  batchItemResultSchema,
  blockchainInfoSchema,
  blockRecordSchema,
  contractContextSchema,
  deadLetterSchema,
  deliveryAttemptSchema,
  eventDeliverySchema,
  groupGeneralSchema,
  listedEventFieldsSchema,
  nodeRecordSchema,
  resendReceiptSchema,
  sendResultSchema,
  subscriptionRecordESchema,
  subscriptionRecordSchema,
  subscriptionSettingsSchema,
  topicInfoESchema,
  topicPageSchema,
  topicStateLSchema,
  topicStateMSchema,
  transactionRecordSchema,
  versionInfoSchema,
} from "../../services/gateway/src/openapi/reply-schemas.ts";

/**
 * `evb-client` has no runtime dependency, so its reply types are written out by hand rather than
 * inferred from the zod schemas the gateway's OpenAPI document shows. They are held to those
 * schemas here: tsc (`npm run typecheck`) fails when a field is added to, removed from or retyped
 * in one and not the other.
 */
type Of<S extends z.ZodType> = z.infer<S>;
type Flat<T> = { [K in keyof T]: T[K] };

describe("the client's reply types are the OpenAPI document's reply schemas", () => {
  it("topics and publish", () => {
    expectTypeOf<TopicInfoE>().toEqualTypeOf<Of<typeof topicInfoESchema>>();
    expectTypeOf<TopicStateM>().toEqualTypeOf<Of<typeof topicStateMSchema>>();
    expectTypeOf<TopicStateL>().toEqualTypeOf<Of<typeof topicStateLSchema>>();
    expectTypeOf<TopicPage<TopicStateM>>().toEqualTypeOf<Of<ReturnType<typeof topicPageSchema<typeof topicStateMSchema>>>>();
    expectTypeOf<SendResult>().toEqualTypeOf<Of<typeof sendResultSchema>>();
    expectTypeOf<BatchItemResult>().toEqualTypeOf<Of<typeof batchItemResultSchema>>();
  });

  it("admin and chain", () => {
    expectTypeOf<VersionInfo>().toEqualTypeOf<Of<typeof versionInfoSchema>>();
    expectTypeOf<GroupGeneral>().toEqualTypeOf<Of<typeof groupGeneralSchema>>();
    expectTypeOf<AdminPage<BlockRecord>>().toEqualTypeOf<Of<ReturnType<typeof adminPageSchema<typeof blockRecordSchema>>>>();
    expectTypeOf<TransactionRecord>().toEqualTypeOf<Of<typeof transactionRecordSchema>>();
    expectTypeOf<BlockRecord>().toEqualTypeOf<Of<typeof blockRecordSchema>>();
    expectTypeOf<NodeRecord>().toEqualTypeOf<Of<typeof nodeRecordSchema>>();
    expectTypeOf<BlockchainInfo>().toEqualTypeOf<Of<typeof blockchainInfoSchema>>();
    expectTypeOf<ContractContext>().toEqualTypeOf<Of<typeof contractContextSchema>>();
  });

  it("subscriptions, attempts and events", () => {
    expectTypeOf<SubscriptionRecordE>().toEqualTypeOf<Of<typeof subscriptionRecordESchema>>();
    expectTypeOf<SubscriptionRecord>().toEqualTypeOf<Of<typeof subscriptionRecordSchema>>();
    expectTypeOf<DeadLetter>().toEqualTypeOf<Of<typeof deadLetterSchema>>();
    expectTypeOf<DeliveryAttempt>().toEqualTypeOf<Of<typeof deliveryAttemptSchema>>();
    expectTypeOf<EventDelivery>().toEqualTypeOf<Of<typeof eventDeliverySchema>>();
    expectTypeOf<ResendReceipt>().toEqualTypeOf<Of<typeof resendReceiptSchema>>();
    expectTypeOf<SubscriptionSettings>().toEqualTypeOf<Of<typeof subscriptionSettingsSchema>>();
    expectTypeOf<Flat<ListedEvent>>().toEqualTypeOf<Flat<BrokerEvent & Of<typeof listedEventFieldsSchema>>>();
  });
});
