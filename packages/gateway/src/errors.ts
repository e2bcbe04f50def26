/**
 * Stable codes for every error the gateway raises; users match on `code`, never on the message.
 * The package README's "Gateway error codes" table says the same, for readers of the docs.
 */
export type GatewayErrorCode =
  /**
   * The gateway file is missing, unreadable, unparsable or fails its schema, or its `servers` folder is not a
   * readable folder. `data`: `{file, field, expected}`.
   */
  | 'GW_CONFIG_INVALID'
  /**
   * A pin file is unreadable, unparsable, fails its schema, or its digests disagree with its tools or
   * definitions; also a rewrite that would not produce the planned pin. `data`: `{file, field, expected}`.
   */
  | 'GW_PIN_FILE_INVALID'
  /** Two pin files of one servers folder use one `name`. `data`: `{file, field, expected}`. */
  | 'GW_PIN_DUPLICATE_NAME'
  /**
   * A bridged upstream did not carry a message: a legacy HTTP+SSE upstream whose stream is not open or that
   * refused a POST (`data.status`), or a request to a shared 2026-07-28 upstream that failed in transit
   * (`data.method`).
   */
  | 'GW_UPSTREAM_UNREACHABLE'
  /**
   * A bridged upstream sent what cannot be a message: a stdout line or SSE event that is not JSON, a line over
   * the size bound, a result that is not an object. Ends that session when it cannot go on.
   */
  | 'GW_UPSTREAM_INVALID'
  /**
   * The gateway's own `tools/list` upstream (fetch on miss; `toolpin pin`, `check`, `approve`) failed, timed
   * out, was refused or was cut short: the catalog cannot be known whole.
   */
  | 'GW_CATALOG_UNAVAILABLE'
  /**
   * `rewritePinFile` with `expected`: the file changed since it was read; nothing was written. `data`:
   * `{file}`.
   */
  | 'GW_PIN_FILE_CHANGED'
  /** An HTTP-only front (`pinGuard`) was given a pin whose upstream is a command. `data`: `{server}`. */
  | 'GW_UPSTREAM_KIND'
  /** A stdio upstream's program could not be started (not found, not executable). `data`: `{command}`. */
  | 'GW_UPSTREAM_SPAWN_FAILED'
  /**
   * A message was sent to, or a request was waiting on, a bridged upstream that has ended (child exited,
   * connection closed, session ended).
   */
  | 'GW_UPSTREAM_EXITED'
  /**
   * A bridged stream cannot be resumed from that `Last-Event-ID` (not issued, its stream ended, or later
   * events dropped): answered 400.
   */
  | 'GW_RESUME_UNAVAILABLE'
  /**
   * Handling a message from a bridged upstream threw: that session ends and its upstream is stopped, the
   * process goes on.
   */
  | 'GW_SESSION_FAILED'
  /**
   * resource-server mode: the identity provider's metadata, JWKS or introspection endpoint could not be
   * used (unreachable, not HTTPS, a redirect, too large, a timeout, not JSON, another issuer): the
   * client's request is refused 503, nothing goes upstream. `data`: `{url (origin only), reason}`.
   */
  | 'GW_AUTH_PROVIDER_UNAVAILABLE'
  /**
   * resource-server mode: the credential toward the upstream could not be had (token exchange or
   * client-credentials grant refused or failed, a `headersFromEnv` variable unset): the request is
   * answered -32041 naming the server, nothing goes upstream. `data`: `{server, reason}`.
   */
  | 'GW_UPSTREAM_CREDENTIAL'
  /**
   * OAuth client mode (`auth.mode: client`): no stored token for the upstream's authorization server, a
   * refresh that failed, metadata that cannot be read or trusted (a protected resource metadata whose
   * `resource` is not the upstream, an authorization server other than the pinned `auth.issuer`). `data`:
   * `{server, reason, file}`, `reason` ∈ `login_required | issuer_drift | metadata_invalid | insufficient_scope`. Never a token.
   */
  | 'GW_UPSTREAM_AUTH'
  /**
   * A stdio upstream's artifact (its npm package, file or image) is not the pinned one: the child is not
   * started (enforce mode); or an HTTP upstream the gateway initialized itself states another name or
   * version than the pinned `{kind: server}` where the drift policy blocks low drift (enforce mode,
   * `onDrift` low `block-server`): the upstream is closed. `data`: `{server, reason: 'artifact_drifted',
   * pinned, observed}` (`observed` null: it states none).
   */
  | 'GW_ARTIFACT_DRIFTED'
  /**
   * A stdio upstream's artifact cannot be resolved (npm or docker missing or failing, a file unreadable, a
   * command whose package spec cannot be pinned): the child is not started in enforce mode. `data`:
   * `{server, reason: 'artifact_unverifiable', problem}`.
   */
  | 'GW_ARTIFACT_UNVERIFIABLE'
  /**
   * `requireSignature`: a pin file not signed by a trusted key (no signature, a signature by another key, or
   * content changed since it was signed). `data`: `{file, field: 'signature', expected}`.
   */
  | 'GW_PIN_SIGNATURE'
  /**
   * A catalog manifest (docs/manifests.md) refused: not a manifest, not signed by a trusted key, edited
   * since it was signed, or stating digests the live catalog does not have. `data`: `{source, reason}`,
   * `reason` ∈ `invalid | malformed | untrusted_key | bad_signature | catalog_differs`, with `kid`, `differences`.
   */
  | 'GW_MANIFEST_REFUSED'
  /**
   * A listener could not bind its address (in use, not permitted, not local). `data`: `{listener, host, port,
   * setting, reason}`: `listener` ∈ `mcp | admin | review`, `setting` the gateway file's field that moves it
   * (`listen.port`, `admin.port`), `reason` the system's code (`EADDRINUSE`…).
   */
  | 'GW_LISTEN_FAILED';

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
