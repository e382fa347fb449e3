/**
 * An outside plugin, as someone writing one in their own repository would: it imports the SDK and nothing
 * else of this package (`irc-network-data/sdk` there; `../../app/sdk.js` here), the type of the stats
 * plugin's service it uses included (`ActivityService`), never the stats plugin's files.
 * test/lib/plugin-modules.test.ts compiles it against the built package, as its own repository would.
 *
 * It adds `GET /network/data/top-talkers/` (public) and the IRC command `TOPTALKERS`: today's most active
 * nicks, counting only the lines said in channels that are not hidden. Load it from the config:
 *
 * ```json
 * { "plugin_modules": ["./dist/examples/top-talkers/index.js"], "plugins": { "stats": {}, "top-talkers": {} } }
 * ```
 */
import {
  definePlugin,
  unavailable,
  type ActivityService,
  type FromJsonSchema,
  type NetworkModel,
} from '../../app/sdk.js';

const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    count: { type: 'integer', minimum: 1, maximum: 25, default: 5, description: 'How many nicks to list.' },
  },
} as const;

/** `{ count: number }`, read off the schema. */
type TopTalkersConfig = FromJsonSchema<typeof configSchema>;

/** The answer's schema, `as const`: the answer's type is read off it, so the two cannot drift apart. */
const responseSchema = {
  type: 'object',
  required: ['date', 'time_zone', 'results'],
  additionalProperties: false,
  properties: {
    date: { type: 'string', description: "Today in the stats plugin's time zone (YYYY-MM-DD)." },
    time_zone: { type: 'string' },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['nick', 'lines'],
        additionalProperties: false,
        properties: { nick: { type: 'string' }, lines: { type: 'integer' } },
      },
    },
  },
} as const;

/** Today's leaders in public channels: a channel known now counts if it is not hidden now. */
function topTalkers(
  activity: ActivityService,
  model: NetworkModel,
  count: number,
  now = new Date(),
): FromJsonSchema<typeof responseSchema> {
  const day = activity.day(now);
  const results = day
    ? activity.topNicks(day, count, (channel) => !(model.channels.get(channel.name)?.hidden ?? channel.hidden))
    : [];
  return { date: activity.dateOf(now), time_zone: activity.timeZone.name, results };
}

export default definePlugin<TopTalkersConfig>({
  name: 'top-talkers',
  description: "Today's most active nicks in public channels, over HTTP and IRC (an example of an outside plugin).",
  // The host versions it was written for: another host refuses to start with it, naming both versions.
  host: '0.x',
  uses: ['stats.activity'],
  configSchema,
  start({ http, commands, services, model, config }) {
    http.route({
      method: 'GET',
      path: '/network/data/top-talkers/',
      name: 'network.top_talkers',
      summary: "Today's most active nicks in public channels",
      tier: 'public',
      response: responseSchema,
      handler() {
        if (!model.ready) throw unavailable('The bot has not finished its first sync yet');
        return { body: topTalkers(services.get('stats.activity'), model, config.count) };
      },
    });
    commands.register({
      name: 'TOPTALKERS',
      usage: '',
      args: [],
      help: "Lists today's most active nicks in public channels.",
      handle({ reply }) {
        const { date, results } = topTalkers(services.get('stats.activity'), model, config.count);
        const list = results.map(({ nick, lines }, index) => `${index + 1}. ${nick} (${lines})`).join(', ');
        reply(results.length > 0 ? `Top talkers on ${date}: ${list}` : `Nobody has spoken yet on ${date}.`);
      },
    });
  },
});
