/**
 * The irc-framework adapter (`irc-network-data/irc-framework`), for a bot that hands its own connected
 * irc-framework client to the host with {@link IrcFrameworkTransport.attach}. Importing this entry loads
 * irc-framework; the main entry and the SDK do not.
 * @packageDocumentation
 */
export { IrcFrameworkTransport, type IrcFrameworkClient } from '../lib/irc/irc-framework.js';
