/**
 * Prometheus metrics (`plugins.metrics`): `GET /metrics` in the Prometheus text format, for the
 * addresses in `allow` and for API tokens approved for the `metrics` endpoint. It serves what the host
 * counts (IRC lines, reconnects, store writes, HTTP requests), what each plugin registers (the stats
 * plugin's records and CTCP VERSION queue, the tokens plugin's rate-limited answers, the nickserv
 * plugin's credential checks), the network's gauges from the model, and prom-client's process and
 * event-loop metrics. It is an operations route: never cached, never rate limited, not in the OpenAPI
 * document.
 */
import { compileAddressList, definePlugin, errorMessage, TextDocument } from '../../lib/sdk.js';
import { registerNetworkGauges } from './network-gauges.js';
import { metricsConfigSchema, type MetricsConfig } from './schema.js';

export default definePlugin<MetricsConfig>({
  name: 'metrics',
  description: 'Prometheus metrics at /metrics: the network, the bot and the process.',
  configSchema: metricsConfigSchema,
  start({ config, http, metrics, model }) {
    let allowed: (address: string) => boolean;
    try {
      allowed = compileAddressList(config.allow);
    } catch (error) {
      throw new Error(`plugins.metrics.allow must name addresses or CIDR ranges: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    metrics.collectDefaults();
    registerNetworkGauges(metrics, model);
    http.route({
      method: 'GET',
      path: '/metrics',
      name: 'metrics',
      tier: 'token',
      document: 'operations',
      summary: 'Prometheus metrics: the network, the bot and the process',
      admit: (request) => allowed(request.ip),
      async handler() {
        const { text, contentType } = await metrics.exposition();
        return { body: new TextDocument(text, contentType) };
      },
    });
  },
});
