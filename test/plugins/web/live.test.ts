/**
 * The website where the bot streams its events (the events plugin runs) and where it does not: the Live page
 * and its filters, the menu, and what the status and channel pages tell their live scripts (follow the stream,
 * or ask their data every `live_seconds`). Each page's scripts are allowed by their hashes and nothing else.
 * What the scripts do in a browser is test/integration/website.test.ts's.
 */
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import type { PluginDefinition } from '../../../lib/plugin.js';
import api from '../../../plugins/api/index.js';
import events from '../../../plugins/events/index.js';
import { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import { ChannelRecordsSlice } from '../../../plugins/stats/model/channel-records.js';
import { HistorySlice } from '../../../plugins/stats/model/history.js';
import { LIVE_LINES, LIVE_TYPES } from '../../../plugins/web/live-page.js';
import { CHANNEL_SCRIPT, EVENTS_PATH, LIVE_SCRIPT, STATUS_SCRIPT } from '../../../plugins/web/live.js';
import web from '../../../plugins/web/index.js';
import { startHarness } from '../../../testing/harness.js';
import { startApi, statsStandIn } from '../api/fixtures/api-host.js';
import { fill, NOW } from '../api/fixtures/network-fill.js';

/** Stands in for the stats plugin, as the api plugin's tests do, with `stats.events` too. */
const stats = statsStandIn({ events: true });

/** The site with the events plugin (`streaming`) or without, on the network the api plugin's tests fill. */
async function start(t: Test, streaming: boolean) {
  const bot = streaming
    ? await startHarness(t, {
        registry: [stats, api, web, events] as PluginDefinition<never>[],
        plugins: { stats: {}, api: { reuse_ms: 0 }, web: { network_name: 'TestNet' }, events: {} },
        register: false,
        clock: () => NOW,
      })
    : await startApi(t, { clock: () => NOW, api: { reuse_ms: 0 }, web: { network_name: 'TestNet' } });
  const slices = bot.host.model.slices();
  fill({
    model: bot.host.model,
    activity: slices.find((slice) => slice instanceof ActivitySlice)!,
    history: slices.find((slice) => slice instanceof HistorySlice)!,
    records: slices.find((slice) => slice instanceof ChannelRecordsSlice)!,
  });
  const page = async (path: string) => {
    const answer = await bot.inject('GET', path);
    return { status: answer.status, headers: answer.headers, html: answer.text };
  };
  return { ...bot, page };
}

/** The inline scripts of `html`, as Content-Security-Policy sources. */
function inlineSources(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, code]) => `'sha256-${createHash('sha256').update(code!, 'utf8').digest('base64')}'`,
  );
}

function scriptSources(headers: Record<string, string>): string[] {
  return (/script-src ([^;]*)/.exec(headers['content-security-policy'] ?? '')?.[1] ?? '').split(' ').sort();
}

t.test('the live scripts are scripts a browser can run, and the stream they open is the events plugin’s', async (t) => {
  for (const [name, script] of Object.entries({ STATUS_SCRIPT, CHANNEL_SCRIPT, LIVE_SCRIPT })) {
    t.doesNotThrow(() => new Function(script.code), `${name} parses`);
    t.notOk(script.code.includes('</'), `${name} cannot end its <script> element early`);
    t.notOk(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(script.code), `${name} writes no markup`);
  }
  const bot = await start(t, true);
  t.ok(
    bot.host.http.routes().some(({ plugin, route }) => plugin === 'events' && route.path === EVENTS_PATH),
    `the events plugin serves ${EVENTS_PATH}`,
  );
});

t.test('with the events plugin: the Live page, its filters, its place in the menu', async (t) => {
  const bot = await start(t, true);
  const live = await bot.page('/network/live/');
  t.equal(live.status, 200);
  t.equal(live.headers['cache-control'], 'public, max-age=10', 'cached like every page');
  const { html } = live;
  t.match(html, /<title>Live · TestNet<\/title>/);
  t.match(html, /<a href="\/network\/live\/" aria-current="page">Live<\/a>/, 'marked in the menu');
  t.match(html, /<noscript><p><strong>This page needs JavaScript<\/strong>/, 'without JavaScript it says it needs it');
  t.match(html, /the same as the API's public stream, <code>GET \/api\/irc\/events\/<\/code>/, 'and what it shows');
  t.match(html, '<section data-live-feed data-stream data-time-zone="UTC" aria-label="Events">');
  t.match(
    html,
    `<ol class="events" data-live-lines data-limit="${LIVE_LINES}" aria-label="Events, newest first"></ol>`,
  );
  t.match(
    html,
    /<form class="filters" action="\/network\/live\/" method="get" hidden>/,
    'the filters wait for the script',
  );
  t.match(html, /<div class="live-bar" data-live-bar hidden>/);
  const boxes = [...html.matchAll(/<input type="checkbox" name="types" value="([a-z_]+)"( checked)?>/g)];
  t.same(
    boxes.map((box) => box[1]),
    LIVE_TYPES.map(({ type }) => type),
    'a box per kind the public stream sends',
  );
  t.notOk(html.includes('value="account"'), 'not the account changes, which are never public');
  t.same(
    boxes.filter((box) => box[2]).map((box) => box[1]),
    LIVE_TYPES.map(({ type }) => type).filter((type) => type !== 'counts'),
    'every kind but the counts at first',
  );
  t.match(html, '<input id="live-channel" name="channel" type="text" value="" placeholder="any channel"');
  t.same(scriptSources(live.headers), [...new Set(inlineSources(html))].sort(), "script-src: the page's own scripts");
  t.ok(inlineSources(html).includes(LIVE_SCRIPT.source), 'the live script among them');

  // The address's filters, as the script writes them: unknown kinds left out, the channel escaped.
  const filtered = (await bot.page('/network/live/?types=topic,bogus,join&channel=%22%3E%3Cscript%3E')).html;
  t.same(
    [...filtered.matchAll(/value="([a-z_]+)" checked>/g)].map((box) => box[1]),
    ['join', 'topic'],
    'the kinds asked for',
  );
  t.match(filtered, 'name="channel" type="text" value="&quot;&gt;&lt;script&gt;"', 'the channel, escaped');
  t.notOk(filtered.includes('"><script>'), 'never as markup');
  const none = (await bot.page('/network/live/?types=bogus')).html;
  t.equal([...none.matchAll(/ checked>/g)].length, LIVE_TYPES.length - 1, 'no kind it knows: the default');

  for (const path of ['/network/', '/network/channels/', '/network/api/', '/network/channel/%23nosuch/']) {
    t.match(
      (await bot.page(path)).html,
      /<li><a href="\/network\/"[^>]*>Network<\/a><\/li><li><a href="\/network\/live\/">Live<\/a><\/li><li><a href="\/network\/channels\/"/,
      `${path}: Live in the menu, after the network`,
    );
  }
});

t.test('with the events plugin: the status and channel pages follow the stream', async (t) => {
  const bot = await start(t, true);
  const status = await bot.page('/network/');
  t.match(status.html, '<dl class="cards" data-live-seconds="15" data-time-zone="UTC" data-stream>');
  t.match(status.html, /<dd aria-live="polite" data-live="users">\d+<\/dd>/, 'the counts are live regions');
  t.match(status.html, '<span data-live-how>updated live as they change</span>.');
  t.ok(inlineSources(status.html).includes(STATUS_SCRIPT.source), 'the status script');
  t.same(scriptSources(status.headers), [...new Set(inlineSources(status.html))].sort());
  // The chart's latest bucket, for the script to tell whether the counts went past it: the history's latest hour.
  const history = (await bot.inject('GET', '/network/data/status/')).body as {
    history: { time: string; users: number; channels: number }[];
  };
  const last = history.history.at(-1)!;
  t.match(
    status.html,
    `<div data-live-chart data-bucket-ms="3600000" data-latest-time="${last.time}" data-latest-users="${last.users}" ` +
      `data-latest-channels="${last.channels}">`,
  );
  t.match(
    (await bot.page('/network/?range=30d')).html,
    /<div data-live-chart data-bucket-ms="86400000" data-latest-time="[^"]+T00:00:00\.000Z"/,
    'over 30 days, daily buckets',
  );

  const chat = await bot.page('/network/channel/%23chat/');
  t.match(
    chat.html,
    '<dl class="cards" data-channel="#chat" data-live-seconds="15" data-time-zone="UTC" data-stream>' +
      '<div><dt>Users now</dt><dd aria-live="polite" data-live="users">3</dd>' +
      '<dd class="record" data-live="peak_users">Most today 12</dd></div>',
    'a channel the bot sits in follows its events',
  );
  t.match(chat.html, '<h2>Topic</h2><p class="topic" aria-live="polite" data-live-topic>hello</p>');
  t.match(chat.html, '<dd data-live="modes">+nt</dd>');
  t.ok(inlineSources(chat.html).includes(CHANNEL_SCRIPT.source), 'the channel script');
  t.same(scriptSources(chat.headers), [...new Set(inlineSources(chat.html))].sort());

  // The bot hears nothing of a channel it does not sit in: its page asks its data instead.
  bot.host.model.upsertChannel('#big', { users: 3000, topic: 'too big to sit in' });
  t.match(
    (await bot.page('/network/channel/%23big/')).html,
    '<dl class="cards" data-channel="#big" data-live-seconds="15" data-time-zone="UTC">',
  );
  bot.host.model.upsertChannel('#"quote"', { users: 2, topic: 'x' });
  t.match(
    (await bot.page('/network/channel/%23%22quote%22/')).html,
    '<dl class="cards" data-channel="#&quot;quote&quot;"',
    "the channel's name escaped in its attribute",
  );
});

t.test('without the events plugin: no Live entry, the Live page says why, the pages ask as before', async (t) => {
  const bot = await start(t, false);
  const live = await bot.page('/network/live/');
  t.equal(live.status, 200);
  t.match(
    live.html,
    '<p data-live-state>Not available: this bot does not stream its events (its events plugin is not enabled). ' +
      'See <a href="/network/api/">the API’s endpoints</a>.</p>',
    'says why, with and without JavaScript',
  );
  t.notOk(live.html.includes('data-live-feed'), 'no feed to fill');
  t.notOk(live.html.includes('<form'), 'no filters');
  t.same(inlineSources(live.html).length, 1, "only the frame's script");
  t.same(scriptSources(live.headers), inlineSources(live.html));
  for (const path of ['/network/', '/network/live/', '/network/channel/%23chat/']) {
    t.notOk((await bot.page(path)).html.includes('<a href="/network/live/"'), `${path}: no Live in the menu`);
  }
  const status = (await bot.page('/network/')).html;
  t.match(status, '<dl class="cards" data-live-seconds="15" data-time-zone="UTC">', 'no stream to follow');
  t.match(status, '<span data-live-how>updated live every 15 s</span>.');
  t.match(
    (await bot.page('/network/channel/%23chat/')).html,
    '<dl class="cards" data-channel="#chat" data-live-seconds="15" data-time-zone="UTC">',
  );
});
