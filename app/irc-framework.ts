/**
 * The irc-framework adapter (`irc-network-data/irc-framework`), for a bot that hands its own connected
 * irc-framework client to the host with {@link IrcFrameworkTransport.attach}. Importing this entry loads
 * irc-framework; the main entry and the SDK do not.
 * @module irc-network-data/irc-framework
 */
export { IrcFrameworkTransport, type IrcFrameworkClient, type IrcFrameworkMessage } from '../lib/irc/irc-framework.js';
