-- 027_feedback_sendgrid.sql: the public key SendGrid's signed Event
-- Webhook is checked with (ECDSA P-256, the base64 DER SubjectPublicKeyInfo
-- SendGrid shows as the "Verification Key"), per account; set with
-- svcadm feedback set ACCOUNT --sendgrid-public-key KEY.
--
-- Additive: binaries of the previous schema do not read it.

ALTER TABLE feedback_settings ADD COLUMN sendgrid_public_key VARCHAR(200) NULL;
