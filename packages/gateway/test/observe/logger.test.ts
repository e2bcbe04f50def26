import { createLogger } from '../../src/observe/logger.js';

const URL_WITH_SECRETS = 'http://user:s3cret@127.0.0.1:9/mcp?api_key=K3yV4lue&x=1';
const SECRETS = ['s3cret', 'K3yV4lue', 'Bearer tok', 'cookie-value'];

function capture(): {
  logger: ReturnType<typeof createLogger>;
  text: () => string;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines, text: () => JSON.stringify(lines) };
}

describe('createLogger', () => {
  it('redacts URL credentials in fields at any depth, in the message, and in errors (message, stack, cause, own fields)', () => {
    const { logger, lines, text } = capture();
    const fields = { event: 'gateway.started', servers: [{ name: 'demo', upstream: URL_WITH_SECRETS }] };
    logger.info(fields, `listening, upstream ${URL_WITH_SECRETS}`);
    const error = Object.assign(
      new Error(`cannot connect to ${URL_WITH_SECRETS}: ECONNREFUSED`, {
        cause: new Error(`inner ${URL_WITH_SECRETS}`),
      }),
      { input: URL_WITH_SECRETS },
    );
    logger.error({ event: 'upstream.error', err: error }, 'upstream failed');
    logger.warn({ event: 'upstream.error', err: `text ${URL_WITH_SECRETS}` }, 'upstream failed');
    for (const secret of SECRETS) expect(text()).not.toContain(secret);
    expect(lines[0]).toMatchObject({
      servers: [{ name: 'demo', upstream: 'http://[redacted]@127.0.0.1:9/mcp?api_key=[redacted]&x=1' }],
      msg: 'listening, upstream http://[redacted]@127.0.0.1:9/mcp?api_key=[redacted]&x=1',
    });
    expect(lines[1]?.err).toMatchObject({
      type: 'Error',
      message: expect.stringContaining('cannot connect to http://[redacted]@127.0.0.1:9/mcp'),
      input: 'http://[redacted]@127.0.0.1:9/mcp?api_key=[redacted]&x=1',
    });
    // What was logged is not changed: it is often a live object (an alert event, a configuration).
    expect(fields.servers[0]?.upstream).toBe(URL_WITH_SECRETS);
  });

  it('redacts credential headers wherever a headers object is logged', () => {
    const { logger, text } = capture();
    logger.warn(
      {
        headers: { authorization: 'Bearer tok', 'x-api-key': 'K3yV4lue' },
        req: { headers: { cookie: 'cookie-value', 'proxy-authorization': 'Basic s3cret' } },
      },
      'headers',
    );
    for (const secret of SECRETS) expect(text()).not.toContain(secret);
    expect(text()).toContain('[redacted]');
  });
});
