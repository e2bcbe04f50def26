// @toolpin/gateway/webhooks: for webhook receivers. Loads node:crypto only, not the gateway.

/** `X-Toolpin-Signature: sha256=<hex HMAC-SHA256 of the raw body>`: sign, verify (constant time), header names. */
export {
  signWebhookBody,
  verifyWebhookSignature,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from '../observe/signWebhook.js';
