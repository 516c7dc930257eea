-- Webhooks as receivers want them (docs/delivery.md): two more settings per subscription.
-- Custom headers ("Custom headers"), sent with every callback: a JSON object of header names to
-- values, kept as the signing secrets are (sealed with SECRETS_KEY when it is set: they often
-- carry a receiver's token), never shown but by name. The body mode ("The raw body mode"):
-- the original's envelope, or the published content as the body. The content filter ("Content
-- filter"): conditions on the published JSON, as JSON text; NULL: every event of the topic.
-- 029, not 027: other branches of the same round took 027 and 028.
ALTER TABLE subscription_settings ADD COLUMN headers text;
ALTER TABLE subscription_settings ADD COLUMN body_mode text NOT NULL DEFAULT 'envelope' CHECK (body_mode IN ('envelope', 'raw'));
ALTER TABLE subscription_settings ADD COLUMN content_filter text;
