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

describe('createLogger formats', () => {
  function written(options: { format?: 'json' | 'pretty'; isTTY?: boolean }): string {
    let text = '';
    const destination = {
      write: (line: string) => {
        text += line;
      },
      ...(options.isTTY === undefined ? {} : { isTTY: options.isTTY }),
    };
    const logger = createLogger({
      destination,
      ...(options.format === undefined ? {} : { format: options.format }),
    });
    logger.warn(
      {
        event: 'call.blocked',
        server: 'demo',
        upstream: URL_WITH_SECRETS,
        arguments: { text: 'Bearer tok' },
      },
      'toolpin blocked echo',
    );
    return text;
  }

  it('pretty: a line a person reads (time, level, message), the fields indented below, still redacted', () => {
    const text = written({ format: 'pretty' });
    const [first, ...fields] = text.trimEnd().split('\n');
    expect(first).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: toolpin blocked echo$/);
    expect(fields).toEqual([
      '    event: "call.blocked"',
      '    server: "demo"',
      '    upstream: "http://[redacted]@127.0.0.1:9/mcp?api_key=[redacted]&x=1"',
      '    arguments: "[redacted]"',
    ]);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    // No colour codes when the destination is not a terminal.
    expect(text).not.toContain('\u001b[');
  });

  it('json: one JSON line per event, whatever the destination', () => {
    const line = JSON.parse(written({ format: 'json', isTTY: true })) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, event: 'call.blocked', msg: 'toolpin blocked echo' });
  });

  it('defaults to pretty for a terminal and to JSON lines for anything else', () => {
    // Coloured on a terminal: the level in yellow (ANSI 33).
    expect(written({ isTTY: true })).toContain('\u001b[33mWARN\u001b[39m: \u001b[36mtoolpin blocked echo');
    expect(JSON.parse(written({}))).toMatchObject({ event: 'call.blocked' });
    expect(JSON.parse(written({ isTTY: false }))).toMatchObject({ event: 'call.blocked' });
  });
});
