-- Issue 23, items 3 and 4: an alert to the owner continues the trace of the delivery attempt that
-- raised it. The W3C traceparent of that attempt's span (a failed one for subscription.failing and
-- .suspended, the first delivered one for .recovered); the sender's `alert send` span is its child
-- and the alert's POST carries a `traceparent` header. NULL when tracing is off and for alerts
-- stored before this column. Nullable without a default: adding it rewrites nothing.
ALTER TABLE owner_alerts ADD COLUMN traceparent text;
