/** The shape of a day of activity: the counting (activity.ts) and the store's encoding (activity-codec.ts) share it. */
import type { ActivityDay, ChannelActivity } from '../contract.js';
import type { NickRecords, SpeakerCounts } from './nick-counts.js';

/** One channel on one day: what the service `stats.activity` shows of it (the SDK's `ChannelActivity`), and its id. */
export interface ChannelDay extends ChannelActivity {
  /** Its place among the day's channels, in the order they were first counted; speakers are counted by it. */
  id: number;
}

/** One day: what the service `stats.activity` shows of it (the SDK's `ActivityDay`), and its counts. */
export interface DayActivity extends ActivityDay {
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
