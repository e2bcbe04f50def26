import { GatewayError } from '../errors.js';

/** Which listener failed, and the gateway file's field that moves it. */
export interface ListenerName {
  /** `mcp`, `admin` (the gateway's two), `review` (`toolpin review`). */
  readonly listener: 'mcp' | 'admin' | 'review';
  /** The field that sets its port (`listen.port`, `admin.port`), or the flag when there is no file. */
  readonly setting: string;
}

const REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is in use (another process listens there)',
  EACCES: 'not permitted (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine',
};

/**
 * A failed `listen` as GatewayError GW_LISTEN_FAILED naming the listener, its address and the
 * setting that moves it ("the admin listener cannot listen on 127.0.0.1:8081: the address is in
 * use; admin.port moves it"). An error without a system code is returned as it is.
 */
export function listenFailure(error: unknown, name: ListenerName, host: string, port: number): unknown {
  const reason = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof reason !== 'string') return error;
  const what = name.listener === 'mcp' ? 'the MCP listener' : `the ${name.listener} listener`;
  return new GatewayError(
    'GW_LISTEN_FAILED',
    `${what} cannot listen on ${host}:${port}: ${REASONS[reason] ?? reason}; ${name.setting} moves it`,
    { listener: name.listener, host, port, setting: name.setting, reason },
    { cause: error },
  );
}
