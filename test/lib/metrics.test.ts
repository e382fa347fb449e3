import t from 'tap';
import { HostMetrics } from '../../lib/metrics.js';

t.test('HTTP requests: counted by route and status, timed by route, written as prom-client writes them', async (t) => {
  const metrics = new HostMetrics();
  const durations = [0.0003, 0.0005, 0.0007, 0.004, 3];
  for (const seconds of durations) metrics.request({ route: 'irc.stats', status: 200, seconds });
  metrics.request({ route: undefined, status: 404, seconds: 0.0001 });
  metrics.request({ route: 'irc.stats', status: 304, seconds: 0.0002 });

  const text = await metrics.registry.metrics();
  const lines = (prefix: string) => text.split('\n').filter((line) => line.startsWith(prefix));
  t.same(lines('http_requests_total'), [
    'http_requests_total{route="irc.stats",status="200"} 5',
    'http_requests_total{route="irc.stats",status="304"} 1',
    'http_requests_total{route="none",status="404"} 1',
  ]);
  t.match(text, /# TYPE http_request_duration_seconds histogram/);
  t.same(lines('http_request_duration_seconds_bucket{le="0.0005",route="irc.stats"}'), [
    // 0.0003, 0.0005 and the 304's 0.0002: a bound holds what equals it.
    'http_request_duration_seconds_bucket{le="0.0005",route="irc.stats"} 3',
  ]);
  t.same(lines('http_request_duration_seconds_bucket{le="0.005",route="irc.stats"}'), [
    'http_request_duration_seconds_bucket{le="0.005",route="irc.stats"} 5',
  ]);
  t.same(lines('http_request_duration_seconds_bucket{le="2.5",route="irc.stats"}'), [
    'http_request_duration_seconds_bucket{le="2.5",route="irc.stats"} 5',
  ]);
  t.same(lines('http_request_duration_seconds_bucket{le="+Inf",route="irc.stats"}'), [
    'http_request_duration_seconds_bucket{le="+Inf",route="irc.stats"} 6',
  ]);
  t.same(lines('http_request_duration_seconds_count'), [
    'http_request_duration_seconds_count{route="irc.stats"} 6',
    'http_request_duration_seconds_count{route="none"} 1',
  ]);
  const sum = Number(lines('http_request_duration_seconds_sum{route="irc.stats"}')[0]?.split(' ')[1]);
  t.ok(Math.abs(sum - 3.0057) < 1e-9, `the sum of the durations (${sum})`);
  // Each bucket line counts what is at or below its bound, so the counts never go down.
  const counts = lines('http_request_duration_seconds_bucket{').map((line) => Number(line.split(' ')[1]));
  t.equal(counts.length, 2 * 13, 'twelve bounds and +Inf, for each route');

  const again = await metrics.registry.metrics();
  t.match(again, /^http_requests_total\{route="irc\.stats",status="200"\} 5$/m, 'read twice, counted once');
  metrics.request({ route: 'irc.stats', status: 200, seconds: 0.001 });
  const third = await metrics.registry.metrics();
  t.match(third, /^http_requests_total\{route="irc\.stats",status="200"\} 6$/m, 'and what came since is added');
  t.match(third, /^http_request_duration_seconds_count\{route="irc\.stats"\} 7$/m);

  const json = await metrics.registry.getMetricsAsJSON();
  const histogram = json.find((metric) => metric.name === 'http_request_duration_seconds');
  t.equal(histogram?.type, 'histogram', 'the JSON form has it too');
});
