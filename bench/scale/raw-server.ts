/**
 * The control beside the bot in the scale bench's HTTP load: node:http alone, in a process of its own at the bot's
 * priority, replaying each path under test as the bot answered it (captured once before the load, bench/captured.ts).
 * Loaded at the same rate at the same moments, it shows how much of an answer's time on this machine is the
 * machine's (a process waiting for one of the cores the network under test keeps busy), whatever the server does.
 */
import { capture, startRawReplay, type Captured } from '../captured.js';

export type RawServerMessage = { kind: 'answers'; botUrl: string; paths: string[] };

process.once('message', (message: RawServerMessage) => {
  void (async () => {
    const answers = new Map<string, Captured>();
    for (const path of message.paths) answers.set(path, await capture(`${message.botUrl}${path}`, {}));
    const raw = await startRawReplay(answers, () => ({}));
    process.send!({ port: Number(new URL(raw.url).port) });
  })();
});
// The bench is gone: so is the control.
process.on('disconnect', () => process.exit(0));
