-- Custom headers per subscription (docs/delivery.md, "Custom headers"), sent with every callback:
-- a JSON object of header names to values, kept as the signing secrets are (sealed with
-- SECRETS_KEY when it is set: they often carry a receiver's token), never shown but by name.
-- 029, not 027: other branches of the same round took 027 and 028.
ALTER TABLE subscription_settings ADD COLUMN headers text;
