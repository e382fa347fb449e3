/**
 * Against the IRCd: on the real test network with a crowd, InspIRCd's own httpd_stats page (`/stats` on a
 * loopback port, every user and channel in one answer) against the bot's first page of channels and against the
 * bot's full user listing (every page of `/api/irc/users/` at the largest page size, one after the other, as a
 * client reading the whole list does), interleaved rounds of autocannon.
 */
import type { Result } from 'autocannon';
import { MAX_LIMIT } from '../lib/http/paging.js';
import { startTestNetwork } from '../test/support/testnet.js';
import { capture, type Captured } from './captured.js';
import { formatBytes, formatCount, formatMs, formatRatio, isSmoke, load, median, runBench } from './common.js';
import { startBotProcess, startCrowdProcess } from './network.js';
import { cpuSeconds } from './scale/proc.js';

/** An answer as it came over the wire (not unzipped), which must be a 200. */
async function wholeAnswer(url: string, headers: Record<string, string> = {}): Promise<Captured> {
  const answer = await capture(url, headers);
  if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
  return answer;
}

/** A header of a captured answer, by lower-case name. */
function headerOf(answer: Captured, name: string): string | undefined {
  const index = answer.rawHeaders.findIndex((value, at) => at % 2 === 0 && value.toLowerCase() === name);
  return index === -1 ? undefined : answer.rawHeaders[index + 1];
}

async function main() {
  const smoke = isSmoke();
  const clients = smoke ? 100 : 2000;
  const channels = smoke ? 10 : 100;
  const rounds = smoke ? 1 : 5;
  const seconds = smoke ? 1 : 4;
  const connections = 10;
  const network = await startTestNetwork();
  try {
    const crowd = await startCrowdProcess(network, clients, channels);
    try {
      const bot = await startBotProcess(network, { usersToken: true });
      try {
        const ours = `${bot.ready.url}/api/irc/channels/`;
        const theirs = network.statsUrl;
        const auth = { Authorization: `Token ${bot.ready.usersToken!}` };
        // As curl --compressed, a browser or an HTTP library asks: the pages, answered again, go gzip'd.
        const authGzip = { ...auth, 'Accept-Encoding': 'gzip' };
        const pageCount = Math.ceil(bot.ready.users / MAX_LIMIT);
        const listingPaths = Array.from(
          { length: pageCount },
          (_, page) => `/api/irc/users/?limit=${MAX_LIMIT}&offset=${page * MAX_LIMIT}`,
        );
        // Every page is whole and the last one ends the list: the listing is the full one.
        const pages: Captured[] = [];
        for (const path of listingPaths) pages.push(await wholeAnswer(`${bot.ready.url}${path}`, auth));
        const listingBytes = pages.reduce((sum, page) => sum + page.body.length, 0);
        const last = JSON.parse(pages.at(-1)!.body.toString('utf8')) as { next: string | null; count: number };
        if (last.next !== null || last.count !== bot.ready.users) {
          throw new Error(`the listing's last page is not its end (next ${last.next}, count ${last.count})`);
        }
        const statsBytes = (await wholeAnswer(theirs)).body.length;
        await load(theirs, {}, 1, connections);
        await load(ours, {}, 1, connections);
        await load(bot.ready.url, auth, 1, connections, listingPaths);
        await load(bot.ready.url, authGzip, 1, connections, listingPaths);
        // Warmed up, every page goes gzip'd.
        let gzipBytes = 0;
        for (const path of listingPaths) {
          const page = await wholeAnswer(`${bot.ready.url}${path}`, authGzip);
          if (headerOf(page, 'content-encoding') !== 'gzip') throw new Error(`${path} did not come gzip'd`);
          gzipBytes += page.body.length;
        }
        const hubPid = network.pids().hub;
        if (hubPid === undefined) throw new Error('the hub has no PID on record');
        /** A load, and the CPU seconds the server of `pid` spent answering it. */
        const measured = async (pid: number, loading: () => Promise<Result>) => {
          const before = cpuSeconds(pid);
          const result = await loading();
          return { result, cpu: cpuSeconds(pid) - before };
        };
        const oursRps: number[] = [];
        const theirRps: number[] = [];
        const listingRps: number[] = [];
        const gzipRps: number[] = [];
        const oursP99: number[] = [];
        const theirP99: number[] = [];
        const listingP99: number[] = [];
        const gzipP99: number[] = [];
        // Answers (listings) per CPU second of the server that gave them.
        const theirPerCpu: number[] = [];
        const listingPerCpu: number[] = [];
        const gzipPerCpu: number[] = [];
        for (let round = 0; round < rounds; round++) {
          const inspircd = await measured(hubPid, () => load(theirs, {}, seconds, connections));
          const bots = await load(ours, {}, seconds, connections);
          const listing = await measured(bot.pid, () => load(bot.ready.url, auth, seconds, connections, listingPaths));
          const gzipped = await measured(bot.pid, () =>
            load(bot.ready.url, authGzip, seconds, connections, listingPaths),
          );
          theirRps.push(inspircd.result.requests.average);
          oursRps.push(bots.requests.average);
          // A listing is its pages, one after the other.
          listingRps.push(listing.result.requests.average / pageCount);
          gzipRps.push(gzipped.result.requests.average / pageCount);
          theirP99.push(inspircd.result.latency.p99);
          oursP99.push(bots.latency.p99);
          listingP99.push(listing.result.latency.p99);
          gzipP99.push(gzipped.result.latency.p99);
          theirPerCpu.push(inspircd.result.requests.total / inspircd.cpu);
          listingPerCpu.push(listing.result.requests.total / pageCount / listing.cpu);
          gzipPerCpu.push(gzipped.result.requests.total / pageCount / gzipped.cpu);
        }
        const ratio = median(oursRps.map((value, index) => value / theirRps[index]!));
        const listingRatio = median(listingPerCpu.map((value, index) => value / theirPerCpu[index]!));
        const gzipRatio = median(gzipPerCpu.map((value, index) => value / theirPerCpu[index]!));
        const gzipRateRatio = median(gzipRps.map((value, index) => value / theirRps[index]!));
        const perAnswer = (perCpu: number[]) => formatMs(1000 / median(perCpu));
        return {
          title: 'Against the IRCd',
          setup:
            `Test network (InspIRCd hub + leaf, Atheme) with ${formatCount(clients)} silent clients in ${channels} channels ` +
            `(the bot sees ${formatCount(bot.ready.users)} users, ${formatCount(bot.ready.channels)} channels); ` +
            `autocannon, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s: the hub's ` +
            "httpd_stats /stats (every user and channel in one answer) versus the bot's /api/irc/channels/ (its " +
            `first page) and the bot's full user listing (/api/irc/users/ with a token, ${pageCount} pages of up to ` +
            `${formatCount(MAX_LIMIT)}, each connection reading them in turn; a listing is all of its pages; asked with ` +
            'Accept-Encoding: gzip as HTTP libraries and browsers ask, and without). The bot, the crowd and the ' +
            'load generator each run in their own process. Per CPU second: answers (listings) divided by the user ' +
            "and system time of the process that gave them (the hub's inspircd, the bot) over the same round; with " +
            'pages this big the load generator, not the bot, sets the rate.',
          figures: [
            {
              name: 'InspIRCd /stats: answers/s, p99, size; its CPU per answer',
              value:
                `${formatCount(median(theirRps))}, ${formatMs(median(theirP99))}, ${formatBytes(statsBytes)}; ` +
                perAnswer(theirPerCpu),
            },
            {
              name: 'bot /api/irc/channels/: req/s, p99',
              value: `${formatCount(median(oursRps))}, ${formatMs(median(oursP99))}`,
            },
            { name: 'ratio bot channels ÷ InspIRCd', value: formatRatio(ratio), target: '≥ 2×', pass: ratio >= 2 },
            {
              name: 'bot full user listing, gzip: listings/s, p99 of a page, size; the bot’s CPU per listing',
              value:
                `${formatCount(median(gzipRps))}, ${formatMs(median(gzipP99))}, ` +
                `${formatBytes(gzipBytes)} in ${pageCount} pages; ${perAnswer(gzipPerCpu)}`,
            },
            {
              name: 'ratio bot full user listing ÷ InspIRCd /stats, per CPU second of each server',
              value: formatRatio(gzipRatio),
              target: '≥ 10×',
              pass: gzipRatio >= 10,
            },
            {
              name: 'the same by rate (the load generator’s own limit with pages this big)',
              value: formatRatio(gzipRateRatio),
            },
            {
              name: 'bot full user listing as it is (no gzip): listings/s, p99 of a page, size; CPU per listing',
              value:
                `${formatCount(median(listingRps))}, ${formatMs(median(listingP99))}, ` +
                `${formatBytes(listingBytes)} in ${pageCount} pages; ${perAnswer(listingPerCpu)}`,
            },
            { name: 'ratio, no gzip ÷ InspIRCd /stats, per CPU second', value: formatRatio(listingRatio) },
          ],
        };
      } finally {
        await bot.stop();
      }
    } finally {
      await crowd.stop();
    }
  } finally {
    await network.stop();
  }
}

runBench('Against the IRCd', main);
