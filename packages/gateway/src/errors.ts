/** Stable codes for every error the gateway raises; users match on `code`, never on the message. */
export type GatewayErrorCode =
  | 'GW_CONFIG_INVALID'
  | 'GW_PIN_FILE_INVALID'
  | 'GW_PIN_DUPLICATE_NAME'
  | 'GW_UPSTREAM_UNREACHABLE'
  | 'GW_UPSTREAM_INVALID'
  | 'GW_CATALOG_UNAVAILABLE'
  | 'GW_PIN_FILE_CHANGED'
  | 'GW_UPSTREAM_KIND'
  | 'GW_UPSTREAM_SPAWN_FAILED'
  | 'GW_UPSTREAM_EXITED'
  | 'GW_RESUME_UNAVAILABLE'
  | 'GW_SESSION_FAILED';

/** Base class of the gateway's errors: a stable `code` plus structured `data`. */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly data: Readonly<Record<string, unknown>>;

  constructor(
    code: GatewayErrorCode,
    message: string,
    data: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'GatewayError';
    this.code = code;
    this.data = Object.freeze({ ...data });
  }
}
