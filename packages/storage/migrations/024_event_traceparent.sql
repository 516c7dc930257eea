-- Issue 23: OpenTelemetry. The W3C traceparent of the indexer's span for the record an event
-- was sealed from, so that the notifier's dispatch and callback spans (and the `traceparent`
-- header of every callback) continue the publish's trace. NULL when tracing is off (the seal
-- then writes the statement it always did) and for events sealed before this column.
-- Nullable without a default: adding it rewrites nothing.
ALTER TABLE events ADD COLUMN traceparent text;
