import { exportFailureMessage, tracesEndpoint, tracingSettings } from '../../src/observe/tracingSdk.js';
import { tracingActive } from '../../src/observe/tracing.js';

describe('tracingSettings: the telemetry block over the standard OTEL_* variables', () => {
  test('is off by default: no block, no variable', () => {
    expect(tracingSettings(undefined, {})).toBeUndefined();
    expect(tracingActive()).toBe(false);
  });

  test('is on with OTEL_TRACES_EXPORTER=otlp (in a list too), the endpoint left to the exporter', () => {
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ serviceName: 'toolpin' });
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: ' console , OTLP' })).toEqual({
      serviceName: 'toolpin',
    });
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingSettings(undefined, { OTEL_TRACES_EXPORTER: 'console' })).toBeUndefined();
  });

  test('takes OTEL_SERVICE_NAME, unless the block names the service', () => {
    const env = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'edge-gateway' };
    expect(tracingSettings(undefined, env)).toEqual({ serviceName: 'edge-gateway' });
    expect(tracingSettings({ serviceName: 'from-file' }, env)).toEqual({ serviceName: 'from-file' });
  });

  test('lets the block win key by key: traces none turns off what the variables turn on, and back', () => {
    expect(tracingSettings({ traces: 'none' }, { OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
    expect(
      tracingSettings(
        { traces: 'otlp', endpoint: 'http://collector:4318/v1/traces' },
        { OTEL_TRACES_EXPORTER: 'none' },
      ),
    ).toEqual({ url: 'http://collector:4318/v1/traces', serviceName: 'toolpin' });
  });

  test('is off whenever OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettings({ traces: 'otlp' }, { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingSettings({ traces: 'otlp' }, { OTEL_SDK_DISABLED: 'false' })).toEqual({
      serviceName: 'toolpin',
    });
  });
});

describe('what telemetry.started and telemetry.export_failed show', () => {
  test('the endpoint the exporter uses: the file, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else the default', () => {
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    };
    expect(tracesEndpoint('http://file:4318/v1/traces', env)).toBe('http://file:4318/v1/traces');
    expect(tracesEndpoint(undefined, env)).toBe('http://traces:4318/custom');
    expect(tracesEndpoint(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(tracesEndpoint(undefined, {})).toBe('http://localhost:4318/v1/traces');
  });

  test('an export failure as its message and code, without the JSON-encoded stack OpenTelemetry hands over', () => {
    // What OpenTelemetry's global error handler passes to diag.error: the whole error, flattened to JSON.
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4318'), { code: 'ECONNREFUSED' });
    const flattened = JSON.stringify({
      stack: error.stack,
      message: error.message,
      name: error.name,
      code: error.code,
    });
    expect(exportFailureMessage(flattened)).toBe('connect ECONNREFUSED 127.0.0.1:4318');
    expect(exportFailureMessage(JSON.stringify({ message: 'Bad Request', code: '400' }))).toBe(
      'Bad Request (400)',
    );
    expect(exportFailureMessage('Export failed\n    at somewhere')).toBe('Export failed');
  });
});
