import { subscriptionSettingsSchema } from "../openapi/reply-schemas.ts";
import { z } from "zod";
import type { OperationSchemas } from "../openapi/operation-schema.ts";

const blankResets = "; blank: the deployment's value again";

/** The optional settings subscribe takes beside its own parameters (not the original's; absent, nothing changes). */
export const subscribeSettingParams = {
  maxRate: z.string().optional().describe(`Callbacks per second at most, 0.01–10000 (100513 otherwise)${blankResets}`),
  retryMaxAttempts: z.string().optional().describe(`Failed attempts of one event before it is dead-lettered, 1–100${blankResets}`),
  retryBaseMs: z.string().optional().describe(`First retry delay (ms, doubling per attempt), 1–86400000${blankResets}`),
  retryMaxMs: z.string().optional().describe(`Cap of the retry delay (ms), 1–604800000, not below retryBaseMs (100514)${blankResets}`),
  deliveryWindow: z.string().optional().describe(`Callbacks in flight at once, 1–256${blankResets}`),
  paused: z.enum(["true", "false"]).optional().describe("true: deliver nothing (backlog and position kept) until false"),
  bodyMode: z
    .enum(["envelope", "raw", ""])
    .optional()
    .describe(
      "envelope (the default): the original's callback body. raw: the published content's bytes as the body, content-type from event-content-type or event-format (else application/octet-stream), evb-event-id, evb-topic and evb-subscription-id headers; signed over the raw body. Else 100518",
    ),
  filter: z
    .string()
    .optional()
    .describe(
      'Content filter, a JSON array of 1-10 conditions that must all hold on the published JSON content: {"path":"order.status","equals":"paid"}, {"path":"region","in":["eu","us"]}, {"path":"vip","exists":true}; dotted paths of 1-8 names (digits index arrays). Content that is not JSON, or over 32 KiB, never matches. 100519 otherwise; blank: none',
    ),
  alertUrl: z
    .string()
    .optional()
    .describe(
      "http(s) URL that gets signed alerts when the subscription fails, is suspended and recovers (100513 if not a URL; 100502 if its host resolves to an address the callback policy refuses); blank: none",
    ),
};

/** admin/subscriptionSettings (settings-operation.ts). */
export const settingsOperationSchemas: OperationSchemas = {
  "admin/subscriptionSettings": {
    tag: "subscriptions",
    summary:
      "Read or change one subscription's own settings: pause, rate, retries, window, signing secret, alert URL, custom headers (extension)",
    description:
      "Without a setting it reads them; with any it changes them and answers them as they are then. `rotateSecret=true` makes a signing secret of the subscription's own, shown in `secret` this once; the previous one keeps signing beside it for `secretGraceMs`. With API keys on, only the owning key or an `admin` key (others: 100504).",
    params: () =>
      z.object({
        subscriptionId: z.string().describe("Required; blank answers 100503, unknown 100504"),
        ...subscribeSettingParams,
        rotateSecret: z.enum(["true", "false"]).optional().describe("true: a new signing secret, answered once"),
        secretGraceMs: z
          .string()
          .optional()
          .describe("How long the old secret signs too after a rotation (ms, 0–2592000000; default 86400000)"),
        dropSecret: z.enum(["true", "false"]).optional().describe("true: sign with the deployment's WEBHOOK_SECRETS again"),
        headers: z
          .string()
          .optional()
          .describe(
            'Custom headers sent with every callback, a JSON object such as {"authorization":"Bearer …"}: at most 20, printable ASCII values of 1024 characters at most, 4096 in all; no hop-by-hop, host, user-agent, content-*, webhook-* or evb-* names (100517). Stored encrypted with SECRETS_KEY, answered by name only; blank or {}: none',
          ),
      }),
    reply: () => subscriptionSettingsSchema,
    errors: () => [
      "SUBSCRIPTION_ID_BLANK",
      "SETTING_INVALID",
      "SETTING_CONFLICT",
      "HEADERS_INVALID",
      "SUBSCRIPTION_ID_NOT_EXIST",
      "BODY_MODE_INVALID",
      "FILTER_INVALID",
      "URL_CONNECT_FAILED",
    ],
  },
};

/** admin/testDelivery (test-delivery-operation.ts). */
export const testDeliveryOperationSchemas: OperationSchemas = {
  "admin/testDelivery": {
    tag: "subscriptions",
    summary: "Send one marked test callback to one subscription's receiver and answer what it said (extension)",
    description:
      "A notifier POSTs a test event (`eventId` `test_<uuid>`, header `webhook-test: true`, signed as the subscription's callbacks are) once, through the subscription's own delivery settings; no event is published, counted, retried or written to the attempt log. The owning key or an `admin` key (others: 100504). No notifier within 30 s: `delivered` false with the reason in `error`.",
    params: () =>
      z.object({ subscriptionId: z.string().describe("Required; blank answers 100503; unknown, ended or not the caller's 100504") }),
    reply: () =>
      z.object({
        subscriptionId: z.string(),
        eventId: z.string().describe("test_<uuid>: never a ledger event's id"),
        delivered: z.boolean().describe("Whether the receiver answered 2xx"),
        httpStatus: z.number().int().nullable().describe("The receiver's status; null when none came"),
        durationMs: z.number().int().describe("From the start of the attempt (DNS included) to its end"),
        error: z.string().nullable().describe("Why it was not delivered (or not sent)"),
        excerpt: z.string().nullable().describe("The start of the receiver's answer body (256 bytes at most)"),
      }),
    errors: () => ["SUBSCRIPTION_ID_BLANK", "SUBSCRIPTION_ID_NOT_EXIST"],
  },
};
