/** The shape of a day of activity: the counting (activity.ts) and the store's encoding (activity-codec.ts) share it. */
import type { NickRecords, SpeakerCounts } from './nick-counts.js';

/** One channel on one day. */
export interface ChannelDay {
  /** Its place among the day's channels, in the order they were first counted; speakers are counted by it. */
  id: number;
  name: string;
  lines: number;
  /** Whether the channel was hidden when its last line (or member count) was seen. */
  hidden: boolean;
  /** The most members the bot saw in it at once that day. */
  peakUsers: number;
  /** Today only: lines per hour of the day; null on earlier days. */
  hourly: Uint32Array | null;
}

export interface DayActivity {
  /** `YYYY-MM-DD` in the slice's time zone. */
  date: string;
  lines: number;
  /** By folded channel name. */
  channels: Map<string, ChannelDay>;
  /** By folded nick: the current day's with hours ({@link NickCounts}), earlier days' with totals only. */
  nicks: NickRecords;
  /** Today only: lines per nick (by its id in {@link nicks}) and channel (by its {@link ChannelDay.id}). */
  speakers: SpeakerCounts | null;
}
