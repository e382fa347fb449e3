/**
 * The website in a real browser (headless chromium) against the bot on the real test network, with a
 * crowd that chats: every page loads without a console error or a failed request, asks nothing of any
 * origin but the bot's, shows the JSON API's numbers, has no serious or critical axe-core violation (in
 * dark colours too), reads with JavaScript off, sorts its tables and shows its charts' tooltips with it
 * on. The bot streams its events (the events plugin): the status page's users count follows clients
 * connecting from the stream, without asking its data again (and by asking it, where the browser has no
 * EventSource); a channel page's users and topic follow its events; the Live page shows what clients do,
 * holds it while paused, and narrows to the kinds asked for. Screenshots at 375 and 1280 px of each page, of
 * three in dark colours and of the Live page with events, go to `.test-output/website/` (WEBSITE_SHOTS names
 * another folder).
 *
 * The bot is started through test/support/website.ts, so this file runs once, on the default IRC client
 * library: nothing here depends on the library, and a browser run costs the most of any test.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Browser, Page } from 'puppeteer-core';
import { startCrowd, type Crowd } from '../../scripts/crowd.js';
import { axeViolations } from '../support/axe.js';
import { launchBrowser } from '../support/browser.js';
import { IrcClient } from '../support/irc-client.js';
import { findRepoRoot, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { eventually, startWebsiteBot, type TestBot } from '../support/website.js';

const shots = process.env.WEBSITE_SHOTS ?? path.join(findRepoRoot(), '.test-output', 'website');
const CHANNELS = ['#lobby', '#help', '#dev'];
const PAGES: [name: string, path: string][] = [
  ['status', '/network/'],
  ['channels', '/network/channels/'],
  ['channel', '/network/channel/%23lobby/'],
  ['servers', '/network/servers/'],
  ['operators', '/network/operators/'],
  ['countries', '/network/countries/'],
  ['clients', '/network/clients/'],
  ['history', '/network/history/'],
  ['live', '/network/live/'],
  ['api', '/network/api/'],
  ['not-found', '/network/channel/%23nosuch/'],
  ['not-found-user', '/network/user/nosuchnick/'],
];

let network: TestNetwork;
let crowd: Crowd;
let bot: TestBot;
let browser: Browser;
const extra: IrcClient[] = [];
const tag = (process.pid % 100000).toString(36);
/**
 * A channel a client of the test makes before the bot starts (the bot joins every channel, "*", at its sync),
 * so that the client is its operator and may set its topic.
 */
const fresh = `#lv${tag}`;
let founder: IrcClient;
const pathOf = (url: string) => new URL(url).pathname;

t.before(async () => {
  network = await startTestNetwork();
  crowd = await startCrowd({
    host: network.host,
    ports: [network.hubPort, network.leafPort],
    clients: 12,
    channels: CHANNELS,
    perClient: 2,
    // Silent: the lines are said below, so the numbers hold still while a page and the API are compared.
    chatIntervalMs: 0,
    webircEvery: 3,
    webircPass: network.webircPass,
    seed: 7,
  });
  founder = await person(`lva${tag}`);
  await founder.request(`JOIN ${fresh}`, '366');
  bot = await startWebsiteBot(network, {
    plugins: {
      stats: { refresh_seconds: 600, version_requests_per_second: 10, history_seconds: 1 },
      api: { cache_seconds: 1, reuse_ms: 0 },
      web: { cache_seconds: 1, live_seconds: 5 },
      events: {},
    },
  });
  // A person of the crowd has a public profile (a page of its own, shot and checked like the others).
  PAGES.splice(PAGES.length - 2, 0, ['user', `/network/user/${encodeURIComponent(crowd.clients[1]!.nick)}/`]);
  browser = await launchBrowser();
  fs.mkdirSync(shots, { recursive: true });
  // Lines in the bot's channels, so that the top lists have something.
  await eventually(
    () => [...CHANNELS, fresh].every((name) => bot.host.model.channels.get(name)?.joined === true),
    'joins',
    20000,
  );
  for (const member of crowd.clients) {
    for (const channel of member.channels) crowd.say(member.nick, channel, `hello from ${member.nick}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
});

t.teardown(async () => {
  await browser?.close();
  await Promise.all(extra.map((client) => client.quit().catch(() => undefined)));
  await crowd?.stop();
  await bot?.stop();
  await network?.stop();
});

/**
 * A page of the bot's that records what went wrong on it and every request it made; with `eventSource: false`,
 * in a browser without EventSource.
 */
async function open(
  pagePath: string,
  options: { javascript?: boolean; width?: number; dark?: boolean; eventSource?: boolean } = {},
) {
  const page = await browser.newPage();
  if (options.eventSource === false) await page.evaluateOnNewDocument('delete window.EventSource');
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${String(error)}`));
  page.on('requestfailed', (request) => {
    // A stream the page closes itself (its filters changed, its tab hidden) ends as aborted: that is no failure.
    const closed = request.failure()?.errorText === 'net::ERR_ABORTED' && pathOf(request.url()) === '/api/irc/events/';
    if (!closed) problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on('request', (request) => requests.push(request.url()));
  await page.setJavaScriptEnabled(options.javascript ?? true);
  // Each visit asks the bot: a page the browser kept (max-age) would show an earlier moment.
  await page.setCacheEnabled(false);
  await page.setViewport({ width: options.width ?? 1280, height: 900 });
  if (options.dark) await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  const response = await page.goto(bot.url + pagePath, { waitUntil: 'load' });
  return { page, problems, requests, status: response?.status() ?? 0, headers: response?.headers() ?? {} };
}

t.test(
  'every page: no console error, no failed request, nothing from elsewhere, no serious axe violation',
  async (t) => {
    const origin = new URL(bot.url).origin;
    for (const [name, pagePath] of PAGES) {
      const { page, problems, requests, status, headers } = await open(pagePath);
      const missing = name.startsWith('not-found');
      t.equal(status, missing ? 404 : 200, `${pagePath} answers`);
      // Under its Content-Security-Policy the page's scripts run (a blocked one is a console error below).
      t.match(
        headers['content-security-policy'],
        /^default-src 'none'; .*script-src 'sha256-.*frame-ancestors 'none'/,
        `${pagePath}: a strict Content-Security-Policy`,
      );
      t.equal(headers['x-content-type-options'], 'nosniff', `${pagePath}: nosniff`);
      t.equal(headers['referrer-policy'], 'same-origin', `${pagePath}: Referrer-Policy`);
      // The browser reports a 404 document itself as a console error; that one is the page's point.
      const expected = (problem: string) => missing && /status of 404/.test(problem);
      t.same(
        problems.filter((problem) => !expected(problem)),
        [],
        `${pagePath}: no console error or failed request`,
      );
      t.same(
        requests.filter((url) => new URL(url).origin !== origin),
        [],
        `${pagePath}: every request goes to the bot`,
      );
      t.same(await axeViolations(page), [], `${pagePath}: axe-core finds nothing serious or critical`);
      await page.screenshot({ path: path.join(shots, `${name}-1280.png`), fullPage: true });
      await page.setViewport({ width: 375, height: 800 });
      await page.screenshot({ path: path.join(shots, `${name}-375.png`), fullPage: true });
      const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
      t.ok(overflow <= 1, `${pagePath}: nothing wider than a 375 px screen (${overflow} px over)`);
      await page.close();
    }
  },
);

t.test("the pages show the JSON API's numbers", async (t) => {
  type Status = {
    snapshot: { users: number; channels: number };
    top_channels_today: { name: string; lines: number }[];
  };
  const read = async <T>(apiPath: string): Promise<T> => (await (await fetch(bot.url + apiPath)).json()) as T;
  /**
   * What a page shows, with the API's answer at the same moment: the crowd keeps chatting, so the answer
   * is read before and after the page, and only a page between two equal answers is compared.
   */
  const atOneMoment = async <T>(apiPath: string, pagePath: string, fromPage: (page: Page) => Promise<string[]>) => {
    for (let attempt = 1; ; attempt++) {
      // `generated_at` changes with every answer; the numbers are what must hold still.
      const numbers = async () =>
        JSON.stringify({ ...(await read<Record<string, unknown>>(apiPath)), generated_at: 0 });
      const before = await numbers();
      const { page } = await open(pagePath, { javascript: false });
      const shown = await fromPage(page);
      await page.close();
      const after = await numbers();
      if (before === after || attempt === 10) return { answer: JSON.parse(after) as T, shown };
    }
  };
  const status = await atOneMoment<Status>('/network/data/status/', '/network/', async (page) => [
    (await page.$eval('[data-live="users"]', (element) => element.textContent)) ?? '',
    (await page.$eval('[data-live="channels"]', (element) => element.textContent)) ?? '',
    await page.$$eval(
      'table',
      (tables) =>
        tables.find((table) => table.querySelector('a[href^="/network/channel/"]'))?.querySelector('tbody tr')
          ?.textContent ?? '',
    ),
  ]);
  const [users, channels, topRow] = status.shown;
  t.equal(users, status.answer.snapshot.users.toLocaleString('en-US'), 'users on the status page');
  t.equal(channels, status.answer.snapshot.channels.toLocaleString('en-US'), 'channels');
  const top = status.answer.top_channels_today[0];
  t.ok(top, 'a top channel today');
  t.match(topRow, `${top!.name}${top!.lines}`, 'the top channel and its lines');

  type Shares = {
    results: { users: number; client?: string; country?: string }[];
    other: number;
    unknown: number;
    total: number;
  };
  const lobby = await atOneMoment<{
    channel: { users: number; record_users: number; record_users_at: string };
    member_clients: Shares;
    member_countries: Shares;
  }>('/network/data/channel/%23lobby/?top=10', '/network/channel/%23lobby/', async (page) => [
    JSON.stringify(await page.$$eval('.cards dd', (elements) => elements.map((element) => element.textContent ?? ''))),
    (await page.$eval('[data-record]', (element) => element.textContent)) ?? '',
    (await page.$eval('[data-record] + dd time', (element) => element.getAttribute('datetime'))) ?? '',
    JSON.stringify(
      await page.$$eval('.pair table', (tables) =>
        tables.map((table) =>
          [...table.querySelectorAll('tbody tr')].map((row) => [
            row.cells[0]?.textContent ?? '',
            row.cells[1]?.textContent ?? '',
          ]),
        ),
      ),
    ),
  ]);
  const [cards, record, recordAt, charts] = lobby.shown;
  const { channel, member_clients: clients, member_countries: countries } = lobby.answer;
  t.equal((JSON.parse(cards!) as string[])[0], String(channel.users), "the channel's users");
  t.equal(record, channel.record_users.toLocaleString('en-US'), "the channel's record users");
  t.ok(channel.record_users >= channel.users, 'at least the users now');
  t.equal(recordAt, channel.record_users_at, 'and when');
  // Each chart's table: the entries, then the other and the unknown members, as the API counts them.
  const rows = (shares: Shares, label: (entry: Shares['results'][number]) => string) => [
    ...shares.results.map((entry) => [label(entry), String(entry.users)]),
    ...(shares.other > 0 ? [['Other', String(shares.other)]] : []),
    ...(shares.unknown > 0 ? [['Unknown', String(shares.unknown)]] : []),
  ];
  t.ok(clients.total > 0 && clients.results.length > 0, `the API counts ${clients.total} members by client`);
  t.same(
    JSON.parse(charts!),
    [rows(clients, (entry) => entry.client ?? ''), rows(countries, (entry) => entry.country ?? '')],
    "the members' clients and countries, as the API counts them",
  );
});

t.test('with JavaScript off, the numbers and tables are there', async (t) => {
  for (const [, pagePath] of PAGES.slice(0, 4)) {
    const { page } = await open(pagePath, { javascript: false });
    const rows = await page.$$eval('tbody tr', (elements) => elements.length);
    t.ok(rows > 0, `${pagePath}: ${rows} table rows`);
    if (pagePath !== '/network/channels/') {
      const titles = await page.$$eval('svg.chart title', (elements) => elements.length);
      t.ok(titles > 0, `${pagePath}: ${titles} chart tooltips of the browser's own`);
    }
    await page.close();
  }
  // The channel list is paged on the server: its headings are links, and sort it without a script.
  const { page } = await open('/network/channels/', { javascript: false });
  await Promise.all([page.waitForNavigation(), page.click('thead th:first-child a')]);
  t.match(page.url(), /\?ordering=name$/);
  t.equal(await page.$eval('thead th:first-child', (element) => element.getAttribute('aria-sort')), 'ascending');
  const names = await page.$$eval('tbody tr td:first-child', (cells) => cells.map((cell) => cell.textContent ?? ''));
  t.same(
    names,
    [...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)),
    'by name',
  );
  await page.close();
});

t.test('tables sort without a reload, with the mouse and with the keyboard', async (t) => {
  const { page, problems } = await open('/network/clients/');
  await page.evaluate('window.sameDocument = true');
  type Row = [client: string, users: string];
  const rows = (): Promise<Row[]> =>
    page.$$eval('table[data-sortable] tbody tr', (trs) =>
      trs.map((tr) => [tr.cells[0]!.textContent ?? '', tr.cells[1]!.textContent ?? ''] as Row),
    );
  const sortState = () =>
    page.$$eval('table[data-sortable] thead th', (ths) => ths.map((th) => th.getAttribute('aria-sort')));
  const heading = (column: number) => `table[data-sortable] thead th:nth-child(${column}) button.sort`;
  const served = await rows();
  t.ok(served.length >= 2, `${served.length} clients to sort`);
  t.same(await sortState(), [null, 'descending', null, null], 'served most users first, and its heading says so');
  const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
  const byName = [...served].sort((a, b) => collator.compare(a[0], b[0]));

  await page.click(heading(1));
  t.same(await rows(), byName, 'a click on "Client": A to Z');
  t.same(await sortState(), ['ascending', null, null, null]);
  await page.focus(heading(1));
  await page.keyboard.press('Enter');
  t.same(await rows(), [...byName].reverse(), 'Enter on it again: Z to A');
  t.same(await sortState(), ['descending', null, null, null]);
  await page.focus(heading(2));
  await page.keyboard.press('Space');
  const users = (await rows()).map((row) => Number(row[1].replace(/,/g, '')));
  t.same(
    users,
    [...users].sort((a, b) => b - a),
    'Space on "Users": most first, as numbers',
  );
  t.same(await sortState(), [null, 'descending', null, null]);
  t.equal(await page.evaluate('window.sameDocument'), true, 'in the same page: no reload');
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});

t.test("a chart's points have tooltips", async (t) => {
  const { page, problems } = await open('/network/');
  t.equal(
    await page.$$eval('svg.chart title', (elements) => elements.length),
    0,
    "the script's tooltip replaces the browser's",
  );
  const hits = await page.$$('svg.chart rect.hit');
  t.ok(hits.length > 0, `${hits.length} points`);
  const last = hits.at(-1)!;
  await last.hover();
  await page.waitForSelector('.tip:not([hidden])');
  const tip = await page.$eval('.tip', (element) => element.textContent);
  t.equal(tip, await last.evaluate((element) => element.getAttribute('data-tip')), 'the point under the pointer');
  t.match(tip, /^\d\d:\d\d · Users \d[\d,]* · Channels \d[\d,]*$/, 'its hour, users and channels');
  const figure = await page.$('figure');
  const box = (await figure!.boundingBox())!;
  await page.screenshot({ path: path.join(shots, 'tooltip-1280.png'), clip: { ...box, height: box.height + 40 } });
  await page.mouse.move(2, 2);
  await page.waitForSelector('.tip[hidden]');
  t.pass('gone when the pointer leaves the chart');
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});

t.test('dark colours: the contrast is enough, and screenshots', async (t) => {
  for (const [name, pagePath] of [
    ['status', '/network/'],
    ['channel', '/network/channel/%23lobby/'],
  ] as const) {
    const { page, problems } = await open(pagePath, { dark: true });
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    t.equal(background, 'rgb(13, 17, 23)', `${pagePath}: in dark colours`);
    t.same(await axeViolations(page, ['color-contrast']), [], `${pagePath}: axe-core's colour contrast passes`);
    t.same(await axeViolations(page), [], `${pagePath}: nothing serious or critical`);
    t.same(problems, [], `${pagePath}: no console error or failed request`);
    await page.screenshot({ path: path.join(shots, `${name}-dark-1280.png`), fullPage: true });
    await page.setViewport({ width: 375, height: 800 });
    await page.screenshot({ path: path.join(shots, `${name}-dark-375.png`), fullPage: true });
    await page.close();
  }
});

t.test('the API page at 375 px: a row per endpoint, stacked, none of them tall', async (t) => {
  const { page } = await open('/network/api/', { width: 375 });
  const heights = await page.$$eval('table.stack tbody tr', (rows) =>
    rows.map((row) => row.getBoundingClientRect().height),
  );
  t.ok(heights.length > 20, `${heights.length} endpoints`);
  t.equal(
    await page.$eval('table.stack tbody tr', (row) => row.ownerDocument.defaultView!.getComputedStyle(row).display),
    'block',
    'stacked',
  );
  t.ok(Math.max(...heights) <= 140, `the tallest row is ${Math.round(Math.max(...heights))} px`);
  await page.close();
});

/** A client of the test's own, registered (quit at the end). */
async function person(nick: string): Promise<IrcClient> {
  const client = new IrcClient({ port: network.leafPort, nick });
  extra.push(client);
  await client.connect();
  const result = await client.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return client;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `client` sets `channel`'s topic; InspIRCd refuses a change that follows another too soon (437): then again. */
async function setTopic(client: IrcClient, channel: string, topic: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const answer = client.waitFor(
      (message) =>
        (message.command === 'TOPIC' && message.params[0]?.toLowerCase() === channel.toLowerCase()) ||
        ['437', '482'].includes(message.command),
      { what: `TOPIC ${channel}` },
    );
    client.send(`TOPIC ${channel} :${topic}`);
    const reply = await answer;
    if (reply.command === 'TOPIC') return;
    if (reply.command !== '437' || attempt === 10) throw new Error(`TOPIC refused: ${reply.raw}`);
    await pause(1500);
  }
}

/** The number a page shows in `selector`, thousands separators left out. */
const shownNumber = async (page: Page, selector: string): Promise<number> =>
  Number((await page.$eval(selector, (element) => element.textContent))!.replace(/,/g, ''));

t.test(
  "the status page's counts follow the event stream, without asking its data again; its chart follows",
  async (t) => {
    const { page, problems, requests } = await open('/network/');
    t.equal(
      await page.evaluate('document.visibilityState'),
      'visible',
      'the page shows (a hidden one holds no stream)',
    );
    t.equal(
      await page.$eval('[data-live-how]', (element) => element.textContent),
      'updated live as they change',
      'the page says how it is updated',
    );
    await eventually(
      () => requests.some((url) => url.endsWith('/api/irc/events/?types=counts')),
      'the stream of counts opened',
      10000,
    );
    // At the stream's opening the page reads its data once, and once more after the answer's max-age (1 s here)
    // when no counts came meanwhile: a change between the page's making and the stream's opening is not lost.
    await pause(4000);
    const statusReads = () => requests.filter((url) => pathOf(url) === '/network/data/status/').length;
    const atOpening = statusReads();
    t.ok(atOpening <= 2, `${atOpening} reads of the status data at the stream's opening`);
    const before = await shownNumber(page, '[data-live="users"]');
    for (let index = 0; index < 3; index++) await person(`late${index}${tag}`);
    await page.waitForFunction(
      `Number(document.querySelector('[data-live="users"]')?.textContent?.replace(/,/g, '')) >= ${before + 3}`,
      { timeout: 15000 },
    );
    t.pass(`the count went from ${before} to at least ${before + 3} in the open page`);
    // The latest history point follows: the chart's last hour (its table, the text alternative) shows the peak.
    await page.waitForFunction(
      `Number(document.querySelector('[data-live-chart] tbody tr:last-child td:nth-child(2)')?.textContent?.replace(/,/g, '')) >= ${before + 3}`,
      { timeout: 30000 },
    );
    t.pass("the chart's latest point shows the new users too, without a reload");
    t.equal(statusReads(), atOpening, 'the status data was not asked again: the counts came from the stream');
    t.equal(await page.evaluate('window.performance.getEntriesByType("navigation").length'), 1, 'one page load');
    t.match(
      await page.$eval('[data-live-time]', (element) => element.textContent),
      /^\d{4}-\d\d-\d\d \d\d:\d\d$/,
      'the "counted at" time is written anew, as the page writes times',
    );
    t.same(problems, [], 'no error meanwhile');
    await page.close();
  },
);

t.test('without EventSource, the status page asks its data every live_seconds, as before', async (t) => {
  const { page, problems, requests } = await open('/network/', { eventSource: false });
  t.equal(await page.$eval('[data-live-how]', (element) => element.textContent), 'updated live every 5 s');
  const before = await shownNumber(page, '[data-live="users"]');
  await person(`poll${tag}`);
  await page.waitForFunction(
    `Number(document.querySelector('[data-live="users"]')?.textContent?.replace(/,/g, '')) >= ${before + 1}`,
    { timeout: 20000 },
  );
  t.pass(`the count went from ${before} to at least ${before + 1}`);
  t.ok(
    requests.filter((url) => pathOf(url) === '/network/data/status/').length >= 2,
    'by asking the status data again',
  );
  t.notOk(
    requests.some((url) => pathOf(url) === '/api/irc/events/'),
    'no stream asked for',
  );
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});

t.test("a channel page's users and topic follow the channel's events", async (t) => {
  const pagePath = `/network/channel/${encodeURIComponent(fresh)}/`;
  const { page, problems, requests } = await open(pagePath);
  t.ok(
    await page.$eval('dl[data-channel]', (element) => element.hasAttribute('data-stream')),
    'the page follows the stream: the bot sits in the channel',
  );
  await eventually(
    () => requests.some((url) => pathOf(url) === '/api/irc/events/' && url.includes('channel=%23lv')),
    "the stream of the channel's events opened",
    10000,
  );
  const before = await shownNumber(page, '[data-live="users"]');
  const joiner = await person(`lvc${tag}`);
  await joiner.request(`JOIN ${fresh}`, '366');
  await page.waitForFunction(`Number(document.querySelector('[data-live="users"]')?.textContent) === ${before + 1}`, {
    timeout: 10000,
  });
  t.pass(`users now went from ${before} to ${before + 1}`);
  const topic = `Live <b>topic</b> & "more" ${tag}`;
  await setTopic(founder, fresh, topic);
  await page.waitForFunction(`document.querySelector('[data-live-topic]')?.textContent === ${JSON.stringify(topic)}`, {
    timeout: 10000,
  });
  t.pass('the topic changed in the open page');
  t.equal(await page.$$eval('[data-live-topic] *', (elements) => elements.length), 0, 'as text, never as markup');
  const reads = requests.filter((url) => pathOf(url) === `/network/data/channel/${encodeURIComponent(fresh)}/`);
  t.ok(
    reads.some((url) => /\?after=[0-9a-z]+-\d+$/.test(url)),
    "each event had the channel's data read again, after it",
  );
  t.ok(reads.filter((url) => !url.includes('?')).length <= 2, 'and nothing else but at the opening: no polling');
  t.equal(await page.evaluate('window.performance.getEntriesByType("navigation").length'), 1, 'one page load');
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});

/** The Live page's lines, newest first. */
const liveLines = (page: Page) =>
  page.$$eval('[data-live-lines] li', (items) =>
    items.map((item) => ({ type: item.getAttribute('data-type') ?? 'note', text: item.textContent ?? '' })),
  );

/** Waits until the Live page has a line of `type` that reads `text`. */
const liveLine = (page: Page, type: string, text: string, timeout = 10000) =>
  page.waitForFunction(
    `[...document.querySelectorAll('[data-live-lines] li[data-type=${JSON.stringify(type)}]')].some((item) => item.textContent.includes(${JSON.stringify(text)}))`,
    { timeout },
  );

t.test('the Live page: events as they happen, held while paused, narrowed by the filters', async (t) => {
  const { page, problems, requests } = await open('/network/live/');
  await page.waitForFunction(`document.querySelector('[data-live-state]')?.textContent?.startsWith('Connected')`, {
    timeout: 10000,
  });
  t.pass('connected');
  t.ok(
    requests.some((url) => pathOf(url) === '/api/irc/events/' && !url.includes('counts') && url.includes('join')),
    'every kind but the counts, at first',
  );
  const guest = await person(`lvb${tag}`);
  const started = Date.now();
  guest.send(`JOIN ${fresh}`);
  await liveLine(page, 'join', `lvb${tag} joined ${fresh}`, 5000);
  t.pass(`the join shows within ${Date.now() - started} ms`);
  t.equal(
    await page.$eval('[data-live-lines] li[data-type="join"] a[href^="/network/channel/"]', (element) =>
      element.getAttribute('href'),
    ),
    `/network/channel/${encodeURIComponent(fresh)}/`,
    'the channel links to its page',
  );
  const topic = `<img src=x onerror="alert(1)"> on air ${tag}`;
  await setTopic(founder, fresh, topic);
  await liveLine(page, 'topic', topic);
  t.pass('the topic shows');
  t.equal(await page.$$eval('[data-live-lines] img', (elements) => elements.length), 0, 'as text, never as markup');
  t.equal((await liveLines(page))[0]!.type, 'topic', 'newest first');

  await page.click('[data-live-pause]');
  t.equal(await page.$eval('[data-live-pause]', (element) => element.textContent), 'Resume');
  const shown = (await liveLines(page)).length;
  guest.send(`PART ${fresh} :back soon`);
  await page.waitForFunction(`/^\\d+ events? held\\.$/.test(document.querySelector('[data-live-held]').textContent)`, {
    timeout: 10000,
  });
  const held = await page.$eval('[data-live-held]', (element) => element.textContent);
  t.pass(`paused: ${held}`);
  t.equal((await liveLines(page)).length, shown, 'no new line while paused');
  await page.click('[data-live-pause]');
  await liveLine(page, 'part', `lvb${tag} left ${fresh}: “back soon”`, 1000);
  t.pass('resumed: the held events show');
  t.equal(await page.$eval('[data-live-held]', (element) => element.textContent), '', 'none held');

  // Only topics, of the test's channel.
  for (const box of await page.$$('input[name="types"]:checked')) {
    if ((await box.evaluate((element) => element.getAttribute('value'))) !== 'topic') await box.click();
  }
  await page.type('#live-channel', fresh.slice(1));
  await page.click('form.filters button[type="submit"]');
  t.equal((await liveLines(page))[0]!.text, `From here on: topics in ${fresh}.`, 'a line says what follows');
  t.equal(new URL(page.url()).search, `?types=topic&channel=${encodeURIComponent(fresh)}`, 'the address keeps them');
  await eventually(
    () => requests.some((url) => url.endsWith(`/api/irc/events/?types=topic&channel=${encodeURIComponent(fresh)}`)),
    'the stream reopened with the filters',
    5000,
  );
  await guest.request(`JOIN ${fresh}`, '366');
  const second = `Second topic ${tag}`;
  await setTopic(founder, fresh, second);
  await liveLine(page, 'topic', second);
  const since = await liveLines(page);
  const newer = since.slice(
    0,
    since.findIndex((line) => line.text.startsWith('From here on')),
  );
  t.same(
    newer.map((line) => line.type),
    ['topic'],
    'the topic shows, and not the join before it',
  );
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});

t.test('a hidden tab closes its stream, and gets what it missed when it shows again', async (t) => {
  const { page, problems, requests } = await open('/network/live/');
  await page.waitForFunction(`document.querySelector('[data-live-state]')?.textContent?.startsWith('Connected')`, {
    timeout: 10000,
  });
  const shown = (hidden: boolean) =>
    page.evaluate(
      `Object.defineProperty(document, 'hidden', { value: ${hidden}, configurable: true });` +
        `document.dispatchEvent(new Event('visibilitychange'))`,
    );
  const opened = () => requests.filter((url) => pathOf(url) === '/api/irc/events/').length;
  const before = opened();
  const joiner = await person(`lvh${tag}`);
  await joiner.request(`JOIN ${fresh}`, '366');
  await liveLine(page, 'join', `lvh${tag} joined`);
  await shown(true);
  t.match(await page.$eval('[data-live-state]', (element) => element.textContent), /^Closed while this tab is hidden/);
  joiner.send(`PART ${fresh} :while hidden`);
  await pause(500);
  t.notOk(
    (await liveLines(page)).some((line) => line.text.includes('while hidden')),
    'nothing comes while hidden',
  );
  await shown(false);
  await liveLine(page, 'part', 'while hidden');
  t.pass('shown again: the part made while it was hidden');
  t.equal(opened(), before + 1, 'by one new stream');
  t.match(
    requests.filter((url) => pathOf(url) === '/api/irc/events/').at(-1),
    /\/api\/irc\/events\/\?types=[a-z_%2C]+&since=[0-9a-z]+-\d+$/,
    'from the last event it had',
  );
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});

t.test('a refused stream: the Live page says why, the status page asks its data instead', async (t) => {
  /** A page whose stream requests the bot answers with `status` (as a proxy, or the bot at its limits, might). */
  const refusing = async (pagePath: string, status: number, message: string) => {
    const page = await browser.newPage();
    const requests: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      requests.push(request.url());
      if (pathOf(request.url()) !== '/api/irc/events/') return void request.continue();
      void request.respond({
        status,
        contentType: 'application/json',
        headers: status === 429 ? { 'Retry-After': '30' } : {},
        body: JSON.stringify({ error: { status, code: 'refused', message } }),
      });
    });
    await page.goto(bot.url + pagePath, { waitUntil: 'load' });
    return { page, requests };
  };
  const missing = await refusing('/network/live/', 404, 'No API path matches /api/irc/events/');
  await missing.page.waitForFunction(`document.querySelector('[data-live-state]')?.textContent?.startsWith('Not')`);
  t.equal(
    await missing.page.$eval('[data-live-state]', (element) => element.textContent),
    'Not available: this bot does not stream its events (its events plugin is not enabled). See the API’s endpoints.',
  );
  t.equal(await missing.page.$eval('[data-live-state] a', (element) => element.getAttribute('href')), '/network/api/');
  t.ok(await missing.page.$eval('form.filters', (element) => (element as unknown as { hidden: boolean }).hidden));
  await missing.page.close();

  const busy = await refusing('/network/live/', 429, 'Too many open event streams from this address (at most 10)');
  await busy.page.waitForFunction(`document.querySelector('[data-live-state]')?.textContent?.startsWith('The')`);
  t.equal(
    await busy.page.$eval('[data-live-state]', (element) => element.textContent),
    'The event stream was refused: Too many open event streams from this address (at most 10). Trying again in 30 s.',
  );
  await busy.page.close();

  const status = await refusing('/network/', 404, 'No API path matches /api/irc/events/');
  await status.page.waitForFunction(
    `document.querySelector('[data-live-how]')?.textContent === 'updated live every 5 s'`,
  );
  await eventually(
    () => status.requests.some((url) => pathOf(url) === '/network/data/status/'),
    'the status data asked',
    5000,
  );
  t.pass('the status page asks its data every live_seconds instead');
  await status.page.close();
});

t.test('the Live page with events of every kind: no serious axe violation, light, dark, at 375 px', async (t) => {
  const { page, problems } = await open('/network/live/');
  await page.waitForFunction(`document.querySelector('[data-live-state]')?.textContent?.startsWith('Connected')`, {
    timeout: 10000,
  });
  const visitor = await person(`lvd${tag}`);
  await visitor.request(`JOIN ${fresh}`, '366');
  founder.send(`MODE ${fresh} +o lvd${tag}`);
  await liveLine(page, 'mode', `+o lvd${tag}`);
  visitor.send(`NICK lve${tag}`);
  await liveLine(page, 'nick', `lvd${tag} is now lve${tag}`);
  visitor.send('AWAY :lunch');
  await setTopic(founder, fresh, `Welcome to ${fresh}: the live test's channel`);
  visitor.send(`PART ${fresh} :off to lunch`);
  await liveLine(page, 'part', 'off to lunch');
  await visitor.quit('see you later');
  // The bot is an operator: a quit's reason is not public (an operator may be shown another than the channels).
  await liveLine(page, 'quit', `lve${tag} quit`);
  const lines = await liveLines(page);
  t.pass(`${lines.length} lines: ${lines.map((line) => line.type).join(', ')}`);
  t.equal(
    await page.$eval(
      '[data-live-lines] li',
      (item) => item.ownerDocument.defaultView!.getComputedStyle(item).animationName,
    ),
    'fresh',
    'a new line is lit up a moment',
  );
  // Asked for less motion, the page moves nothing (and the screenshots show the lines as they stay).
  await page.emulateMediaFeatures([{ name: 'prefers-reduced-motion', value: 'reduce' }]);
  t.equal(
    await page.$eval(
      '[data-live-lines] li',
      (item) => item.ownerDocument.defaultView!.getComputedStyle(item).animationName,
    ),
    'none',
    'but not for a reader who asked for less motion',
  );
  t.same(await axeViolations(page), [], 'axe-core finds nothing serious or critical');
  await page.screenshot({ path: path.join(shots, 'live-events-1280.png'), fullPage: true });
  await page.emulateMediaFeatures([
    { name: 'prefers-reduced-motion', value: 'reduce' },
    { name: 'prefers-color-scheme', value: 'dark' },
  ]);
  t.same(await axeViolations(page, ['color-contrast']), [], "in dark colours, axe-core's colour contrast passes");
  await page.screenshot({ path: path.join(shots, 'live-events-dark-1280.png'), fullPage: true });
  await page.emulateMediaFeatures([{ name: 'prefers-reduced-motion', value: 'reduce' }]);
  await page.setViewport({ width: 375, height: 800 });
  const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
  t.ok(overflow <= 1, `nothing wider than a 375 px screen (${overflow} px over)`);
  await page.screenshot({ path: path.join(shots, 'live-events-375.png'), fullPage: true });
  t.same(problems, [], 'no error meanwhile');
  await page.close();
});
