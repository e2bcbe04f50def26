import { z } from 'zod';
import { ENV_NAME_PATTERN, httpUrlSchema } from './schemaParts.js';
import type { AlertEventName, WebhookConfig } from './types.js';

/** Every alert event a webhook can subscribe to. */
export const ALERT_EVENT_NAMES: readonly AlertEventName[] = [
  'catalog.verified',
  'catalog.drift',
  'call.blocked',
  'call.flagged',
];

/** What a webhook receives unless its `events` says otherwise: findings, not the routine verified listings. */
export const DEFAULT_WEBHOOK_EVENTS: readonly AlertEventName[] = [
  'catalog.drift',
  'call.blocked',
  'call.flagged',
];

const MIN_SECRET_LENGTH = 16;
const SECRET_EXPECTED = `a secret of at least ${MIN_SECRET_LENGTH} characters`;

/**
 * One webhook: where alert events are POSTed and the HMAC secret that signs them, given inline
 * (`secret`) or by the name of an environment variable read at load time (`secretEnv`, so the
 * secret stays out of files under version control). Exactly one of the two.
 */
export const webhookSchema = z
  .strictObject({
    url: httpUrlSchema,
    secret: z.string().min(MIN_SECRET_LENGTH, SECRET_EXPECTED).optional(),
    secretEnv: z.string().regex(ENV_NAME_PATTERN, 'an environment variable name').optional(),
    name: z.string().min(1).max(64).optional(),
    events: z
      .array(z.enum(ALERT_EVENT_NAMES as [AlertEventName, ...AlertEventName[]]))
      .min(1)
      .default([...DEFAULT_WEBHOOK_EVENTS]),
    minSeverity: z.enum(['high', 'low']).optional(),
    maxAttempts: z.int().min(1).max(20).default(5),
    timeoutMs: z.int().min(1).default(5000),
    queueSize: z.int().min(1).default(1000),
  })
  .transform((data, ctx): WebhookConfig => {
    const { url, secret, secretEnv, name, events, minSeverity, maxAttempts, timeoutMs, queueSize } = data;
    if ((secret === undefined) === (secretEnv === undefined)) {
      ctx.issues.push({
        code: 'custom',
        message: 'exactly one of "secret" or "secretEnv"',
        input: undefined,
        path: ['secret'],
      });
      return z.NEVER;
    }
    const resolved = secret ?? process.env[secretEnv ?? ''];
    if (resolved === undefined || resolved.length < MIN_SECRET_LENGTH) {
      const note = resolved === undefined ? 'is not set' : 'is too short';
      ctx.issues.push({
        code: 'custom',
        message: `an environment variable holding ${SECRET_EXPECTED} (${secretEnv} ${note})`,
        input: undefined,
        path: ['secretEnv'],
      });
      return z.NEVER;
    }
    return {
      url,
      secret: resolved,
      ...(secretEnv === undefined ? {} : { secretEnv }),
      ...(name === undefined ? {} : { name }),
      events,
      ...(minSeverity === undefined ? {} : { minSeverity }),
      maxAttempts,
      timeoutMs,
      queueSize,
    };
  });

/** `alerts` in a pin file: webhooks for this server's events (beside the gateway's). */
export const pinAlertsSchema = z.strictObject({
  webhooks: z.array(webhookSchema).default([]),
});

/** `alerts` in the gateway file: webhooks for every server's events, the repeat and the aggregation windows. */
export const gatewayAlertsSchema = z.strictObject({
  webhooks: z.array(webhookSchema).default([]),
  /** A catalog event identical to its server's previous one within this window is not sent again. */
  dedupeSeconds: z.int().min(0).default(300),
  /** Call events after the first of a server, tool and reason are sent as one count per window of this length. */
  aggregateSeconds: z.int().min(1).max(3600).default(10),
});
