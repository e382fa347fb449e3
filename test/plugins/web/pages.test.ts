/**
 * The website's pages in the real host, over HTTP without a socket, on the network the api plugin's
 * tests fill by hand: every page is HTML in the site's frame, shows the public API's numbers, holds no
 * private string (IP, host, ident, realname, account, hidden channel), escapes what comes from the
 * network, and answers a hidden or unknown channel with the same 404 page.
 */
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { when } from '../../../plugins/web/layout.js';
import { startApi } from '../api/fixtures/api-host.js';
import { CHAT_RECORD, CHAT_RECORD_AT, fill, NOW, PRIVATE } from '../api/fixtures/network-fill.js';

const PAGES = [
  '/network/',
  '/network/channels/',
  '/network/channel/%23chat/',
  '/network/user/Alice/',
  '/network/servers/',
  '/network/operators/',
  '/network/countries/',
  '/network/clients/',
  '/network/history/',
  '/network/history/?range=30d',
  '/network/live/',
  '/network/api/',
];

async function start(t: Test, timeZone = 'UTC') {
  const bot = await startApi(t, {
    clock: () => NOW,
    api: { cache_seconds: 30, reuse_ms: 0 },
    web: { network_name: 'TestNet', cache_seconds: 20 },
    timeZone,
  });
  fill({ model: bot.host.model, activity: bot.activity, history: bot.history, records: bot.records });
  const page = async (path: string) => {
    const response = await bot.inject('GET', path);
    return { ...response, html: response.text };
  };
  const json = async (path: string) => (await bot.inject('GET', path)).body as Record<string, unknown>;
  return { ...bot, page, json };
}

t.test("the site's icon: an SVG from the bot, cached for a day", async (t) => {
  const bot = await start(t);
  const icon = await bot.inject('GET', '/network/icon.svg');
  t.equal(icon.status, 200);
  t.equal(icon.headers['content-type'], 'image/svg+xml');
  t.equal(icon.headers['cache-control'], 'public, max-age=86400');
  t.match(icon.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
});

t.test('every page: HTML in the frame, cacheable, and nothing private', async (t) => {
  const { page } = await start(t);
  for (const path of PAGES) {
    const answer = await page(path);
    t.equal(answer.status, 200, `${path} answers`);
    t.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
    t.equal(answer.headers['cache-control'], 'public, max-age=20', `${path} may be cached`);
    t.ok(answer.headers.etag, `${path} has an ETag`);
    t.match(answer.html, /^<!doctype html><html lang="en">/);
    t.match(answer.html, /<a class="name" href="\/network\/">TestNet<\/a>/, 'the network heads the page');
    t.match(answer.html, /<nav aria-label="Site">.*href="\/network\/channels\/"/, 'with the menu');
    t.match(answer.html, /Times are in UTC\./, 'the time zone named');
    for (const secret of PRIVATE) t.notOk(answer.html.includes(secret), `${path} does not show ${secret}`);
    t.match(answer.html, /<script>\(\(\)=>\{\nconst collator=/, `${path}: the site's script is in the page`);
    t.notMatch(
      answer.html.replace('<link rel="icon" href="/network/icon.svg" type="image/svg+xml">', ''),
      /<script [^>]*src=|<link [^>]*href=|<img /,
      `${path}: nothing to fetch but the site's icon`,
    );
  }
});

t.test("the status page shows the public API's numbers, and updates them live", async (t) => {
  const { page, json } = await start(t);
  const status = await json('/network/data/status/');
  const snapshot = status.snapshot as Record<string, number>;
  const { html } = await page('/network/');
  t.match(html, new RegExp(`data-live="users">${snapshot.users}<`), 'users');
  t.match(html, new RegExp(`data-live="channels">${snapshot.channels}<`), 'channels');
  const top = (status.top_channels_today as { name: string; lines: number }[])[0]!;
  t.match(
    html,
    new RegExp(`href="/network/channel/%23chat/">#chat</a></td><td class="n">${top.lines}<`),
    'top channel',
  );
  t.match(html, /<svg class="chart"[^>]*role="img"/, 'a chart drawn on the server');
  t.match(
    html,
    /<details><summary>Users and channels over 24 hours, hourly peaks: the numbers/,
    'with its numbers as a table',
  );
  t.match(
    html,
    '<p>Over: <strong aria-current="true">24 hours</strong> · <a href="/network/?range=7d">7 days</a> · ' +
      '<a href="/network/?range=30d">30 days</a></p>',
    'a range picker that works without a script',
  );
  const month = (await page('/network/?range=30d')).html;
  t.match(month, /<details><summary>Users and channels over 30 days, daily peaks: the numbers/, '30 days');
  t.match(
    month,
    '<a href="/network/">24 hours</a> · <a href="/network/?range=7d">7 days</a> · <strong aria-current="true">30 days</strong>',
  );
  t.match(html, /fetch\('\/network\/data\/status\/'/, 'the live script asks the public status');
  t.match(html, /Record 129 on 2026-11-21/, "the users' record from the history");
  // The tables sort without a reload; the top lists come most lines first, which their headings say.
  t.match(
    html,
    '<table data-sortable><caption class="muted">Most lines today (2026-11-21)</caption><thead><tr>' +
      '<th scope="col">Channel</th><th scope="col" class="n" aria-sort="descending">Lines</th>',
  );
  // Each hour of the chart has a tooltip with its numbers, over a column the pointer finds.
  const history = status.history as { time: string; users: number; channels: number }[];
  const titles = [...html.matchAll(/<rect class="hit"[^>]*><title>([^<]*)<\/title><\/rect>/g)].map((match) => match[1]);
  t.same(
    titles,
    history.map((point) => `${when(point.time, 'UTC').slice(11)} · Users ${point.users} · Channels ${point.channels}`),
    'a tooltip per hour: its time, users and channels',
  );
});

t.test("the channels page lists the API's public channels, searches and sorts", async (t) => {
  const { page, json } = await start(t);
  const listed = ((await json('/api/irc/channels/')).results as { name: string }[]).map((channel) => channel.name);
  const { html } = await page('/network/channels/');
  for (const name of listed) t.match(html, `>${name}</a>`, `${name} is listed`);
  t.notOk(html.includes('#hush'), 'not the secret channel');
  const searched = await page('/network/channels/?search=dev');
  t.match(searched.html, />#dev<\/a>/);
  t.notMatch(searched.html, />#chat<\/a>/);
  t.match(searched.html, /value="dev"/, 'the search stays in its box');
  const sorted = await page('/network/channels/?ordering=name');
  t.ok(sorted.html.indexOf('>#chat<') < sorted.html.indexOf('>#dev<'), 'by name');
  t.equal((await page('/network/channels/?ordering=bogus&offset=-5')).status, 200, 'a bad value is ignored');
  // The list is paged: its headings are links the server sorts by, with or without JavaScript.
  t.notMatch(html, /<table[^>]*data-sortable/, 'not sorted in the page, which holds one page of the list');
  t.match(
    html,
    '<th scope="col"><a href="/network/channels/?ordering=name">Channel</a></th>' +
      '<th scope="col" class="n" aria-sort="descending"><a href="/network/channels/?ordering=users">Users</a></th>',
    'most users first by default; the users heading turns it around',
  );
  t.match(
    sorted.html,
    '<th scope="col" aria-sort="ascending"><a href="/network/channels/?ordering=-name">Channel</a></th>' +
      '<th scope="col" class="n"><a href="/network/channels/?ordering=-users">Users</a></th>',
  );
  const backwards = await page('/network/channels/?ordering=-name');
  t.ok(backwards.html.indexOf('>#dev<') < backwards.html.indexOf('>#chat<'), 'Z to A');
  t.match(
    (await page('/network/channels/?ordering=-name&search=e&offset=50')).html,
    '<th scope="col" aria-sort="descending"><a href="/network/channels/?search=e&amp;ordering=name">Channel</a></th>',
    'the search stays, and the list starts again from its first page',
  );
});

t.test("a channel's page: its record users in the site's time zone, its members by client and country", async (t) => {
  const { page, json, host } = await start(t, 'Europe/Berlin');
  const answer = await json('/network/data/channel/%23chat/');
  t.match(answer.channel, { record_users: CHAT_RECORD, record_users_at: CHAT_RECORD_AT.toISOString() });
  const { html } = await page('/network/channel/%23chat/');
  t.match(html, /Times are in Europe\/Berlin\./);
  t.match(
    html,
    `<dt>Record users</dt><dd data-record>${CHAT_RECORD}</dd>` +
      `<dd class="record">on <time datetime="${CHAT_RECORD_AT.toISOString()}">2026-11-19 19:45</time></dd>`,
    'the record and when: 18:45 UTC is 19:45 in Berlin',
  );
  // The members the API counts: WeeChat twice; Germany once, the United Kingdom once.
  t.match(
    html,
    /<h2>Members by client<\/h2><figure><svg class="chart small"[^>]*aria-label="Members by IRC client \(2 counted\)"/,
  );
  t.match(html, '<title>WeeChat · Members 2 (100 %)</title>', 'a tooltip on the bar');
  t.match(html, '<tr><td>WeeChat</td><td class="n">2</td><td class="n">100 %</td></tr>', 'and its row in the table');
  t.match(html, '<tr><td>Germany</td><td class="n">1</td><td class="n">50 %</td></tr>');
  t.match(html, '<tr><td>United Kingdom</td><td class="n">1</td><td class="n">50 %</td></tr>');
  t.notMatch(html, /<td>(Other|Unknown)<\/td>/, 'no other or unknown member to show');

  // Members the bot knows nothing of, and more clients than the chart names: "Other" and "Unknown".
  const { model } = host;
  for (let index = 0; index < 11; index++) {
    model.upsertUser(`fan${index}`, { server: 'hub.test.net', client: `Client${index}`, countryCode: 'NL' });
    model.addMember('#chat', `fan${index}`);
  }
  model.upsertUser('dave', { server: 'hub.test.net' });
  model.addMember('#chat', 'dave');
  const more = await json('/network/data/channel/%23chat/');
  const clients = more.member_clients as { results: { client: string }[] };
  t.match(clients, { other: 2, unknown: 1, total: 14 });
  const crowded = (await page('/network/channel/%23chat/')).html;
  const bars = [...crowded.matchAll(/<title>([^<]*) · Members [^<]*<\/title>/g)].map((match) => match[1]);
  t.same(
    bars.slice(0, 12),
    [...clients.results.map((entry) => entry.client), 'Other', 'Unknown'],
    'the top ten, then the rest, then the unknown',
  );
  t.match(crowded, '<tr><td>Other</td><td class="n">2</td><td class="n">14.29 %</td></tr>');
  t.match(crowded, '<tr><td>Unknown</td><td class="n">1</td><td class="n">7.14 %</td></tr>');
  t.match(crowded, '<tr><td>Netherlands</td><td class="n">11</td><td class="n">78.57 %</td></tr>');

  // A channel the bot is not in: no members known, and the page says why.
  model.upsertChannel('#big', { users: 3000, topic: 'too big to sit in' });
  const outside = (await page('/network/channel/%23big/')).html;
  t.match(outside, /Members by IRC client: the bot does not sit in this channel, so it does not know its members\./);
  t.match(outside, /<dd data-record>3,000<\/dd>/, 'its users now are its record until the collector notes one');
});

/**
 * The page's security headers, checked against its HTML: the policy allows exactly the inline scripts the
 * page carries (by their SHA-256), runs nothing else, and lets no other site frame it.
 */
function checkSecurityHeaders(t: Test, path: string, answer: { headers: Record<string, string>; text: string }) {
  const policy = answer.headers['content-security-policy'] ?? '';
  t.match(policy, /^default-src 'none'; /, `${path}: a Content-Security-Policy that allows nothing by default`);
  for (const directive of ["frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'", "connect-src 'self'"]) {
    t.ok(policy.includes(directive), `${path}: ${directive}`);
  }
  const scriptSources = /script-src ([^;]*)/.exec(policy)?.[1]?.split(' ') ?? [];
  const inline = [...answer.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, code]) => `'sha256-${createHash('sha256').update(code!, 'utf8').digest('base64')}'`,
  );
  t.ok(inline.length > 0, `${path}: it has inline scripts`);
  t.same(
    [...scriptSources].sort(),
    [...new Set(inline)].sort(),
    `${path}: script-src is exactly its inline scripts' hashes`,
  );
  t.notMatch(policy, /script-src [^;]*('unsafe|\*|http)/, `${path}: no unsafe script source`);
  t.equal(answer.headers['x-content-type-options'], 'nosniff', `${path}: nosniff`);
  t.equal(answer.headers['x-frame-options'], 'DENY', `${path}: no framing, for browsers without frame-ancestors`);
  t.equal(answer.headers['referrer-policy'], 'same-origin', `${path}: no address in a Referer to another site`);
}

t.test('every page, and the refusal page, carries the security headers', async (t) => {
  const bot = await start(t);
  for (const path of [...PAGES, '/network/channel/%23hush/', '/network/user/nosuchnick/']) {
    checkSecurityHeaders(t, path, await bot.page(path));
  }
});

t.test('a hidden channel and an unknown one get the same 404 page; the network text is escaped', async (t) => {
  const bot = await start(t);
  const hidden = await bot.page('/network/channel/%23hush/');
  const unknown = await bot.page('/network/channel/%23nosuch/');
  t.equal(hidden.status, 404);
  t.equal(unknown.status, 404);
  t.equal(hidden.headers['cache-control'], 'no-store');
  t.match(hidden.html, /<h1>Not found<\/h1>/);
  t.equal(
    hidden.html.replace('#hush', '#X'),
    unknown.html.replace('#nosuch', '#X'),
    'nothing tells a hidden channel from one that does not exist',
  );
  bot.host.model.upsertChannel('#chat', { topic: '<script>alert(1)</script> & "more"' });
  const channel = await bot.page('/network/channel/%23chat/');
  t.match(channel.html, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;more&quot;/);
  t.notOk(channel.html.includes('<script>alert'), 'never as markup');
});

t.test('the API page lists the endpoints with their tiers; pages are not in the OpenAPI document', async (t) => {
  const { page, json } = await start(t);
  const { html } = await page('/network/api/');
  // On a narrow screen each row is stacked: the method and path on a line, the tier and endpoint labelled, the summary.
  t.match(html, /<table class="stack"><caption class="muted">Endpoints<\/caption>/);
  t.match(
    html,
    '<tr><td class="inline"><code>GET</code></td><td class="inline"><code>/api/irc/users/</code></td>' +
      '<td data-label="Tier and endpoint">token <br><span class="muted">irc.users</span></td>' +
      '<td>List of connected users, including hostmasks</td></tr>',
  );
  t.match(html, /<code>\/network\/data\/status\/<\/code><\/td><td data-label="Tier and endpoint">public <br>/);
  t.notMatch(
    html,
    /<table[^>]*data-sortable/,
    'a stacked table hides its headings on a phone, so it has no sort buttons',
  );
  const paths = Object.keys((await json('/api/openapi.json')).paths as object);
  t.notOk(
    paths.some((path) => path === '/network/' || path.startsWith('/network/channel/')),
    'no page in the document',
  );
});

t.test('the servers page charts the latency once it is measured', async (t) => {
  const bot = await start(t);
  t.match((await bot.page('/network/servers/')).html, /No latency measured yet\./);
  bot.host.model.upsertServer('hub.test.net', { latencyMs: 1.5, measuredAt: NOW.toISOString() });
  const { html } = await bot.page('/network/servers/');
  t.match(html, /<svg class="chart"[^>]*aria-label="Latency by server now \(ms\)"/);
  t.match(html, /<td>hub\.test\.net<\/td><td class="n">1\.5<\/td>/, 'and its numbers as a table');
});

t.test("without a configured name, the server's NETWORK; before the server said one, a plain title", async (t) => {
  const bot = await startApi(t, { clock: () => NOW, web: {} });
  fill({ model: bot.host.model, activity: bot.activity, history: bot.history, records: bot.records });
  t.match((await bot.inject('GET', '/network/servers/')).text, /<a class="name" href="\/network\/">IRC network<\/a>/);
  bot.irc.register('DataBot', 'CASEMAPPING=rfc1459 NETWORK=Libera.Chat');
  t.match((await bot.inject('GET', '/network/servers/')).text, /<a class="name" href="\/network\/">Libera\.Chat<\/a>/);
});

t.test("30 days west of UTC: each day's bucket is labelled with its own date", async (t) => {
  const site = await start(t, 'America/Los_Angeles');
  const since = new Date(NOW.getTime() - 30 * 24 * 3_600_000).toISOString();
  const days = (await site.json(`/network/data/history/?since=${since}&bucket=1d&limit=1000`)).results as {
    time: string;
  }[];
  t.ok(days.length > 0, `${days.length} days in the history`);
  const html = (await site.page('/network/history/?range=30d')).html;
  for (const day of days) {
    const date = day.time.slice(0, 10);
    t.ok(html.includes(`<tr><td>${date}</td>`), `${date} labels its own bucket`);
  }
});
