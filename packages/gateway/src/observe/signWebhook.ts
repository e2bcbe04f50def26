import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body, keyed with the webhook secret>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-toolpin-signature';
/** Header carrying the event time in Unix seconds (also inside the signed body as `time`). */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-toolpin-timestamp';

/** Signs a webhook body: `sha256=` + hex HMAC-SHA256 of its exact bytes with the secret. */
export function signWebhookBody(body: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Checks a received signature header against the raw body, in constant time (for receivers, and
 * the tests). Verify the raw bytes: a re-serialized body would not match.
 */
export function verifyWebhookSignature(
  body: string | Buffer,
  secret: string,
  header: string | undefined,
): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signWebhookBody(body, secret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
