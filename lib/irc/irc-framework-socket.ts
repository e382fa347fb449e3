/**
 * The socket transport the irc-framework adapter gives the library on a connection of its own. Apart from
 * irc-framework.ts so that the package's types of the adapter name nothing of the library's internals.
 */
import NetTransport from 'irc-framework/src/transports/net.js';
import { LineSlicer } from './line-slicer.js';

/** The connect option SlicedNetTransport finds the bot's own line handler under. */
export const BOT_LINES = 'bot_lines';

/**
 * The library's socket transport, with what it reads handed on in slices of time ({@link LineSlicer}), so a
 * burst of replies never holds the event loop. Everything the library does with a line (parsing, its own
 * state, the raw middleware that brings it to the bot) happens within the slice. The close is passed on
 * after the last line read.
 */
export class SlicedNetTransport extends NetTransport {
  private slicer: LineSlicer | null = null;

  override onSocketData(data: Buffer): void {
    const socket = this.socket;
    if (!socket) return;
    this.slicer ??= new LineSlicer((line) => this.deliver(line), socket);
    this.slicer.push(data);
  }

  /** A line to the bot first; to the library too unless the bot spares it (the adapter's `BOT_ONLY`). */
  private deliver(line: string): void {
    const take = this.options[BOT_LINES] as ((line: string) => boolean) | undefined;
    if (take?.(line)) return;
    this.emit('line', line);
  }

  override onSocketClose(): void {
    if (this.slicer) this.slicer.end(() => super.onSocketClose());
    else super.onSocketClose();
  }

  override disposeSocket(): void {
    this.slicer?.clear();
    this.slicer = null;
    super.disposeSocket();
  }
}
