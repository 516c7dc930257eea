import { pino } from "pino";
import { activeTraceIds } from "@evb/telemetry";
import { escapeRawControls } from "./json-line.ts";
import { currentRequestId } from "./request-context.ts";

/**
 * The pino logger a service owns; connection strings and secrets are redacted. A line logged
 * while serving an HTTP request carries that request's `requestId` (see request-context.ts), and
 * with tracing on a line logged inside a span its `trace_id` and `span_id`. Fields from callers
 * (topics, client ids, URLs, headers) may hold characters a terminal acts on: JSON escapes the
 * C0 ones, escapeRawControls the rest.
 */
export function createServiceLogger(service: string, level: string, base: Record<string, unknown> = {}): pino.Logger {
  return pino({
    level,
    base: { service, ...base },
    hooks: { streamWrite: escapeRawControls },
    mixin: () => {
      const requestId = currentRequestId();
      const ids = activeTraceIds();
      if (requestId === undefined) return ids ?? {};
      return ids ? { requestId, ...ids } : { requestId };
    },
    redact: {
      // Secrets never reach a log line: passwords, signing secrets, credentials in headers, URLs
      // that may carry a password. Components log these objects under these names.
      paths: [
        "password",
        "*.password",
        "*.secret",
        "*.signingSecret",
        "authorization",
        "*.authorization",
        "*.headers.authorization",
        "*.headers.cookie",
        "config.DATABASE_URL",
        "config.REDIS_URL",
        "config.WEBHOOK_SECRETS",
        "config.SECRETS_KEY",
        "config.API_BASIC_AUTH",
        "config.KAFKA_SASL_PASSWORD",
        "*.sasl.password",
      ],
      censor: "***",
    },
  });
}
