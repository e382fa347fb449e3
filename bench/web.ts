/**
 * The website: each page of the real host (stats, api, tokens and web plugins, a fake IRC transport) over
 * a model of 5,000 users and 2,000 channels, a day of chat and a week of history, asked one request at a
 * time, evenly spaced, as a reader's browser would: the time from request to the page's last byte (its
 * p50 and p99), and each page's size. The status page has no other asset (its style sheet and its script
 * are in the page), so its size is the page's whole weight.
 */
import http from 'node:http';
import type { ActivitySlice } from '../plugins/stats/model/activity.js';
import type { HistorySlice } from '../plugins/stats/model/history.js';
import { formatCount, formatMs, isSmoke, runBench, type Figure } from './common.js';
import { startBenchHost } from './host.js';
import { channelOf, nickOf, populate } from './model.js';

const PAGES = [
  ['status', '/network/'],
  ['channels', '/network/channels/'],
  ['channel', `/network/channel/${encodeURIComponent(channelOf(0))}/`],
  ['user', `/network/user/${encodeURIComponent(nickOf(1))}/`],
  ['servers', '/network/servers/'],
  ['operators', '/network/operators/'],
  ['countries', '/network/countries/'],
  ['clients', '/network/clients/'],
  ['history (7 days)', '/network/history/?range=7d'],
  ['API', '/network/api/'],
] as const;

/** One GET on a kept-alive connection: milliseconds to the last byte, the status and the body's size. */
function timedGet(agent: http.Agent, url: string): Promise<{ ms: number; status: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve({ ms: performance.now() - started, status: response.statusCode ?? 0, bytes }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

async function main() {
  const smoke = isSmoke();
  const users = smoke ? 500 : 5000;
  const channels = smoke ? 200 : 2000;
  const requests = smoke ? 20 : 400;
  const gapMs = 10;
  const bench = await startBenchHost({
    stats: {},
    api: {},
    tokens: { rate_limit: { enabled: false } },
    web: { network_name: 'BenchNet' },
  });
  const { host } = bench;
  const { model } = host;
  populate(model, { users, channels });
  // A day of chat: a line a second spread over the joined channels and their members.
  const slices = model.slices();
  const activity = slices.find((slice) => slice.name === 'activity') as ActivitySlice;
  const history = slices.find((slice) => slice.name === 'history') as HistorySlice;
  const now = Date.now();
  const joined = [...model.channels.all()].filter((channel) => channel.members.size > 0).slice(0, 200);
  for (let second = 0; second < (smoke ? 600 : 20_000); second++) {
    const channel = joined[second % joined.length]!;
    const members = [...channel.members.keys()];
    const nick = members[second % members.length]!.nick;
    activity.record(channel.name, nick, channel.hidden, new Date(now - (second % 80_000) * 1000));
  }
  // A week of history, a point every 5 minutes.
  for (let point = 7 * 288; point > 0; point--) {
    history.add({
      time: now - point * 300_000,
      users: users - (point % 300),
      channels,
      operators: 3,
      servers: 3,
      maxUsers: users + 100,
    });
  }

  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const figures: Figure[] = [];
  try {
    for (const [label, pagePath] of PAGES) {
      const url = `${host.url}${pagePath}`;
      for (let warm = 0; warm < 20; warm++) await timedGet(agent, url);
      const times: number[] = [];
      let bytes = 0;
      for (let index = 0; index < requests; index++) {
        const answer = await timedGet(agent, url);
        if (answer.status !== 200) throw new Error(`${pagePath} answered ${answer.status}`);
        times.push(answer.ms);
        bytes = answer.bytes;
        await new Promise((resolve) => setTimeout(resolve, gapMs));
      }
      const p99 = percentile(times, 0.99);
      figures.push({
        name: `${label}: p50 / p99 (${formatCount(bytes / 1024)} KB)`,
        value: `${formatMs(percentile(times, 0.5))} / ${formatMs(p99)}`,
        target: 'p99 ≤ 20 ms',
        pass: p99 <= 20,
      });
      if (label === 'status') {
        figures.push({
          name: 'status page with its assets',
          value: `${formatCount(bytes / 1024)} KB`,
          target: '≤ 150 KB before compression',
          pass: bytes <= 150 * 1024,
        });
      }
    }
  } finally {
    agent.destroy();
    await bench.stop();
  }
  return {
    title: 'Website',
    setup:
      `The real host with the web plugin over ${formatCount(users)} users and ${formatCount(channels)} channels, ` +
      `a day of chat in 200 channels and a week of history; each page asked ${requests} times, one request at a ` +
      `time ${gapMs} ms apart on a kept-alive connection, after 20 unmeasured ones. Times are to the last byte.`,
    figures,
  };
}

runBench('Website', main);
