/**
 * The collector (`plugins.stats`): keeps the model equal to the network's
 * truth. A full sync at every connect and every `refresh_seconds`, live
 * tracking of every change the bot sees in between, latency probes every
 * `latency_seconds`, and the services' command lists every `commands_refresh_seconds`.
 * For the network statistics it also counts chat lines, records a history
 * point every `history_seconds`, asks users' clients (CTCP VERSION) and
 * locates their countries.
 */
import { definePlugin, errorMessage } from '../../lib/sdk.js';
import { ActivitySlice } from './model/activity.js';
import { ChannelRecordsSlice } from './model/channel-records.js';
import { DAY_MS, HistorySlice } from './model/history.js';
import { historyService } from './services.js';
import { countLine } from './activity.js';
import { VersionAsker } from './clients.js';
import { registerStatsMetrics } from './metrics.js';
import { CountryLocator, loadCountryLookup, locateKnownUser, noteWhoisHost } from './countries.js';
import { noteWhoisAccount, WhoisFiller } from './whois-fill.js';
import { historyRetention, recordHistoryPoint } from './history.js';
import { noteJoinRefusal } from './joins.js';
import { measureLatency, type ProbeChoice } from './latency.js';
import { FormedChannels } from './list.js';
import { track } from './live.js';
import { statsConfigSchema, type StatsConfig } from './schema.js';
import { fetchServiceCommands, withUnansweredKept } from './service-help.js';
import { requestNotices, trackClientNotice } from './notices.js';
import { TopologyWatch } from './splits.js';
import {
  createSyncState,
  fullSync,
  newChannelsDue,
  refreshCounts,
  refreshNewChannels,
  wholeListDue,
  type SyncContext,
} from './sync.js';
import { TaskQueue } from './task-queue.js';

/** While a services server is split off, LINKS is asked this often to see it come back. */
const SERVICES_RELINK_CHECK_MS = 5000;

/** The longest a latency probe waits for its answer. */
const MAX_PROBE_TIMEOUT_MS = 5000;

/** A failed sync is first tried again this long after it failed, then twice as long each time. */
export const SYNC_RETRY_FIRST_MS = 5000;

/**
 * How long after its `failures`-th failure in a row a sync is tried again: 5 s, 10 s, 20 s…, at most the
 * refresh interval (a wait that long is left to the refresh).
 */
export function syncRetryDelayMs(failures: number, refreshMs: number): number {
  return Math.min(refreshMs, SYNC_RETRY_FIRST_MS * 2 ** Math.min(20, Math.max(0, failures - 1)));
}

/**
 * The time now, as one Date per millisecond: every line asks for it, and a Date of its own for each
 * was a third of what the collector allocated per line. The Date is shared, so nobody may change it.
 */
function millisecondClock(): () => Date {
  let millisecond = NaN;
  let date = new Date();
  return () => {
    const now = Date.now();
    if (now !== millisecond) {
      millisecond = now;
      date = new Date(now);
    }
    return date;
  };
}

export default definePlugin<StatsConfig>({
  name: 'stats',
  description: 'Collects the network: numbers, servers, channels, users, latency, service commands, live changes.',
  configSchema: statsConfigSchema,
  provides: ['stats.activity', 'stats.history', 'stats.records'],
  start({ irc, model, logger, config, timers, commands, services, onModelChange, metrics }) {
    const context: SyncContext = { irc, model, logger, config };
    const tasks = new TaskQueue(logger, () => !irc.state.connected);
    // The services' HELP is a conversation with them (PRIVMSG and NOTICE), not a server query whose replies could
    // skew a latency probe: it takes turns of its own, so that a slow one (tens of seconds on a loaded network)
    // never holds up the counts and syncs.
    const serviceTasks = new TaskQueue(logger, () => !irc.state.connected);
    // The LISTs between syncs take turns of their own, so that they go on during a long sync too (a refresh's
    // WHO slice takes 20 s at 50,000 users): channels form and empty all the time.
    const listTasks = new TaskQueue(logger, () => !irc.state.connected);
    // Bookkeeping of one connection: what the bot asked and learnt about the network's answers.
    let syncState = createSyncState();
    let probeChoice: ProbeChoice = new Map();
    // Channels the server's notices say were formed, into the model before the next LIST (list.ts).
    const formed = new FormedChannels(context, () => syncState.list);
    // Set once registration, OPER and bot mode are done: a sync before that would run as a non-operator.
    let ready = false;
    // Until the services have answered once, they are asked after every sync.
    let commandsMissing = true;

    // A sync asks every WHO mask when the first of a connection, after a link or split, or asked for by SYNC;
    // else the next slice of them (who.ts, WHO_SLICE_ROWS).
    let wholeAsked = false;
    // A sync that failed before the model was marked synced, while connected (a reply that never came, a
    // refusal), is tried again before the next refresh: until the first one completes the API answers 503, and a
    // refresh may be minutes away. A retry belongs to its connection (`connection` counts them).
    const retry = { failures: 0, pending: false, connection: 0 };
    const syncTask = async (): Promise<void> => {
      const whole = wholeAsked || syncState.syncs === 0;
      wholeAsked = false;
      const state = syncState;
      const completed = state.syncs;
      try {
        await fullSync(context, state, whole);
        retry.failures = 0;
      } catch (error) {
        // Marked synced already, a step after it failed (a channel's modes, the real hosts): the next refresh asks
        // again, and a whole sync now would cost the server for nothing.
        if (state.syncs > completed) retry.failures = 0;
        else if (state === syncState && ready && irc.state.connected) {
          if (whole) wholeAsked = true;
          retrySync();
        }
        throw error;
      }
    };
    const sync = (): Promise<void> => (ready ? tasks.run('sync', syncTask) : Promise.resolve());
    // After a connection's first sync, and after a sync tried again: the latency at once, and the services' commands
    // until they answer.
    const firstSync = (): Promise<void> =>
      sync().then(() => {
        void latency();
        if (commandsMissing) void serviceCommands();
      });
    const retrySync = (): void => {
      retry.failures++;
      const refreshMs = config.refresh_seconds * 1000;
      const ms = syncRetryDelayMs(retry.failures, refreshMs);
      // The refresh comes as soon: it is the next try.
      if (retry.pending || ms >= refreshMs) return;
      retry.pending = true;
      const connection = retry.connection;
      logger.info('sync to be retried', { in_ms: ms, failures: retry.failures });
      timers.after(ms, () => {
        if (connection !== retry.connection) return;
        retry.pending = false;
        // A refresh or SYNC completed meanwhile.
        if (retry.failures > 0) void firstSync();
      });
    };
    const wholeSync = (): Promise<void> => {
      if (!ready) return Promise.resolve();
      wholeAsked = true;
      return tasks.runFresh('sync', syncTask);
    };
    // Beside a sync too (the requests' lane sends one LIST at a time); a sync's own LIST counts as the last one.
    const counts = (): void => {
      if (!ready || !model.ready || listTasks.has('counts') || listTasks.has('new')) return;
      const now = Date.now();
      const channels = model.channels.size;
      const { listedAt, newListedAt } = syncState.list;
      if (wholeListDue({ now, listedAt, channels })) {
        void listTasks.run('counts', () => refreshCounts(context, syncState));
        return;
      }
      // Between two whole LISTs of a big network, the channels formed in the last minute.
      const elist = irc.state.isupport.get('ELIST');
      if (!newChannelsDue({ now, newListedAt, channels, elist })) return;
      void listTasks.run('new', () => refreshNewChannels(context, syncState));
    };
    // After a split or a link: the servers and counts at once, then a sync that starts after it (for new users).
    const topology = new TopologyWatch(context, () => {
      void wholeSync();
    });
    const latency = (): Promise<void> =>
      ready && model.ready
        ? tasks.run('latency', () =>
            // In the LISTs' turn too: a probe's answer queued behind a LIST's would measure the LIST.
            listTasks.run('latency', () =>
              measureLatency(context, probeChoice, Math.min(MAX_PROBE_TIMEOUT_MS, config.latency_seconds * 1000)),
            ),
          )
        : Promise.resolve();
    const serviceCommands = (): Promise<void> =>
      ready
        ? serviceTasks.run('commands', async () => {
            const lists = await fetchServiceCommands(context);
            if (!irc.state.connected) return;
            commandsMissing = lists.length === 0;
            // A service that did not answer this time (offline, slow) keeps the list it gave last time.
            if (!commandsMissing) model.setServiceCommands(withUnansweredKept(lists, config.services, model.services));
          })
        : Promise.resolve();

    let activity: ActivitySlice;
    try {
      activity = new ActivitySlice({
        timeZone: config.time_zone,
        retentionDays: config.retention_days,
        fold: (name) => model.fold(name),
      });
    } catch (error) {
      throw new Error(`config.plugins.stats.time_zone: ${errorMessage(error)}`, { cause: error });
    }
    const locator = new CountryLocator(loadCountryLookup(config.geoip_database, logger));
    const history = new HistorySlice(historyRetention(config));
    const records = new ChannelRecordsSlice((name) => model.fold(name));
    // The host hands them to the store when this start returns, which restores what was saved.
    model.addSlice(activity);
    model.addSlice(history);
    model.addSlice(records);
    services.provide('stats.activity', activity);
    services.provide('stats.history', historyService(history));
    services.provide('stats.records', { channel: (name) => records.channel(name) });
    const versions = new VersionAsker({
      irc,
      model,
      services: config.services,
      retryMs: config.version_retry_seconds * 1000,
    });
    registerStatsMetrics(metrics, { history, versionsWaiting: () => versions.waiting, now: () => model.stats });
    const whois = new WhoisFiller({ irc, model, services: config.services });
    /**
     * Activity counts change with every line, and channel records with every count that passes one: the store
     * hears of them every `save_seconds` (and at stop), in the one write the activity costs anyway. Once a day,
     * the records of channels gone for the retention are forgotten (while synced: the model has every channel).
     */
    const announceActivity = (): void => {
      const at = new Date();
      activity.rollover(at);
      if (activity.takeChanges()) model.changed({ slice: 'activity', kind: 'counts' });
      if (model.ready) {
        const before = at.getTime() - config.retention_days * DAY_MS;
        records.forget(activity.dateOf(at), (key) => model.channels.byKey(key) !== undefined, before);
      }
      if (records.takeChanges()) model.changed({ slice: 'channel-records', kind: 'records' });
    };

    // Made once: the handler runs for every line the bot receives.
    const live = { irc, model };
    const counting = { irc, model, activity };
    const now = millisecondClock();
    irc.on('message', (message) => {
      // Two lines in three are chat, and only activity counting reads a PRIVMSG (live tracking, JOIN refusals,
      // VERSION replies and WHOIS hosts take nothing from one): they skip the other handlers' checks.
      if (message.command === 'PRIVMSG') {
        countLine(message, counting, now());
        return;
      }
      if (ready) {
        topology.consider(message);
        const notice = message.command === 'NOTICE' ? trackClientNotice(message, model) : null;
        if (notice?.kind === 'channel') formed.note(notice.name);
        else if (notice && notice.kind !== 'exit')
          syncState.whoRound?.add(model.fold(notice.kind === 'nick' ? notice.to : notice.nick));
      }
      track(message, live);
      const refused = noteJoinRefusal(message, syncState.joins, model);
      // Once per channel and 30 min at most: why the bot is not in a channel it would sit in.
      if (refused !== null) {
        logger.info('join refused', { channel: refused, reply: message.command, text: message.params.at(-1) ?? '' });
      }
      countLine(message, counting, now());
      versions.handleReply(message);
      noteWhoisHost(message, model);
      noteWhoisAccount(message, model);
    });
    onModelChange((change) => {
      if (change.slice === 'network' && change.kind === 'synced') versions.syncCompleted();
      if (!change.name) return;
      if (change.slice === 'users' && change.kind === 'upsert') {
        // One lookup for both.
        const user = model.users.get(change.name);
        if (!user) return;
        locateKnownUser(model, locator, user);
        versions.considerUser(user);
        whois.considerUser(user);
      } else if (change.slice === 'channels' && (change.kind === 'join' || change.kind === 'upsert')) {
        // A member more, or a LIST count: every channel's record, and today's peak of those the bot is in.
        const key = model.fold(change.name);
        const channel = model.channels.byKey(key);
        if (!channel) return;
        const at = now();
        records.note(channel.name, channel.users, at.getTime(), key);
        if (channel.joined) activity.notePeak(channel.name, channel.users, channel.hidden, at);
      }
    });
    const newConnection = (): void => {
      retry.connection++;
      retry.failures = 0;
      retry.pending = false;
    };
    irc.on('ready', () => {
      ready = true;
      newConnection();
      requestNotices(irc);
      versions.reset();
      whois.reset();
      syncState = createSyncState();
      probeChoice = new Map();
      void firstSync();
    });
    irc.on('disconnected', () => {
      ready = false;
      newConnection();
      formed.clear();
      versions.reset();
      whois.reset();
    });
    timers.every(config.refresh_seconds * 1000, () => {
      void sync().then(() => {
        if (commandsMissing) void serviceCommands();
      });
    });
    // Checked eight times a second, so that a LIST due every half second is asked within an eighth of one.
    timers.every(125, counts);
    if (config.whois_per_second > 0) timers.every(1000 / config.whois_per_second, () => void whois.tick());
    timers.every(config.latency_seconds * 1000, () => void latency());
    // A bot that gets no link notices learns that a split services server is back by asking.
    timers.every(SERVICES_RELINK_CHECK_MS, () => {
      if (ready && model.ready && model.servers.servicesSplit.length > 0) void topology.check();
    });
    timers.every(config.commands_refresh_seconds * 1000, () => void serviceCommands());
    timers.every(config.history_seconds * 1000, () => {
      if (recordHistoryPoint(model, history, new Date())) model.changed({ slice: 'history', kind: 'point' });
    });
    timers.every(config.save_seconds * 1000, announceActivity);
    if (config.version_requests_per_second > 0) {
      timers.every(1000 / config.version_requests_per_second, () => {
        if (ready && model.ready) versions.tick();
      });
    }

    commands.register({
      name: 'SYNC',
      usage: '',
      maxArgs: 0,
      help: 'Runs a full sync of the network now (LUSERS, LINKS, LIST, WHO, STATS P) and reports the counts.',
      adminOnly: true,
      // A sync of a big network takes longer than an answer may wait; its answer carries no secret.
      slow: true,
      async handle({ reply }) {
        await wholeSync();
        const { stats } = model;
        reply(
          `Synced at ${stats.syncedAt ?? 'never'}: ${model.users.size} users, ${model.channels.size} channels, ` +
            `${model.servers.size} servers (network says ${stats.users ?? '?'} users)${stats.syncedAsOperator ? ', as an operator' : ''}.`,
        );
      },
    });

    return announceActivity;
  },
});
