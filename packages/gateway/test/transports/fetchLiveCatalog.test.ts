import { GatewayError } from '../../src/errors.js';
import { fetchLiveCatalog } from '../../src/transports/fetchLiveCatalog.js';

// The CLI's stdio listing starts its child the way the gateway does (openStdioChild): a child that
// cannot start, or ends before answering, is "cannot connect", never another error code.
describe('fetchLiveCatalog over stdio', () => {
  async function failure(command: string[]): Promise<GatewayError> {
    const error = await fetchLiveCatalog({ command }, { timeoutMs: 10_000 }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }

  it('reports a program that cannot be started as GW_CATALOG_UNAVAILABLE at the connect stage', async () => {
    const error = await failure(['/nonexistent/toolpin-no-such-server']);
    expect(error.code).toBe('GW_CATALOG_UNAVAILABLE');
    expect(error.data).toEqual({ stage: 'connect' });
    expect(error.message).toMatch(
      /^cannot connect to command \/nonexistent\/toolpin-no-such-server: .*ENOENT/,
    );
  });

  it('reports a child that exits before initialize as GW_CATALOG_UNAVAILABLE at the connect stage', async () => {
    const error = await failure([process.execPath, '-e', 'process.exit(3)']);
    expect(error.code).toBe('GW_CATALOG_UNAVAILABLE');
    expect(error.data).toEqual({ stage: 'connect' });
    expect(error.message).toMatch(/^cannot connect to command /);
  });
});
