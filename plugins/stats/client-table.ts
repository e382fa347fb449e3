/**
 * The IRC clients the collector knows by their CTCP VERSION replies. The first
 * entry whose pattern matches the (cleaned) reply names the client; its version
 * is the entry's `version` capture, or else the first dotted number after the
 * name. Order matters where one name contains another.
 */

export interface KnownClient {
  /** The name shown in the client distribution. */
  name: string;
  pattern: RegExp;
  /** Captures the version in group 1, for replies where the first dotted number is not it. */
  version?: RegExp;
}

export const KNOWN_CLIENTS: readonly KnownClient[] = [
  { name: 'irssi', pattern: /^irssi\b/i },
  { name: 'WeeChat', pattern: /^weechat\b/i },
  { name: 'HexChat', pattern: /\bhexchat\b/i },
  { name: 'XChat', pattern: /^x-?chat\b/i },
  { name: 'mIRC', pattern: /^mirc\b/i },
  { name: 'AdiIRC', pattern: /^adiirc\b/i },
  { name: 'Textual', pattern: /^textual\b/i },
  { name: 'The Lounge', pattern: /^the ?lounge\b/i },
  { name: 'KiwiIRC', pattern: /^kiwi ?irc\b/i },
  { name: 'Quassel', pattern: /^quassel\b/i },
  { name: 'ZNC', pattern: /^znc\b/i },
  { name: 'Konversation', pattern: /^konversation\b/i },
  { name: 'IRCCloud', pattern: /^irccloud\b/i },
  { name: 'Halloy', pattern: /^halloy\b/i },
  { name: 'senpai', pattern: /^senpai\b/i },
  { name: 'gamja', pattern: /^gamja\b/i },
  { name: 'goguma', pattern: /^goguma\b/i },
  { name: 'catgirl', pattern: /^catgirl\b/i },
  { name: 'KVIrc', pattern: /^kvirc\b/i },
  { name: 'LimeChat', pattern: /^limechat\b/i },
  { name: 'Colloquy', pattern: /^colloquy\b/i },
  { name: 'Palaver', pattern: /^palaver\b/i },
  { name: 'Revolution IRC', pattern: /^revolution ?irc\b/i },
  { name: 'AndroIRC', pattern: /^androirc\b/i, version: /\((\d+(?:\.\d+)+)/ },
  { name: 'AndChat', pattern: /^andchat\b/i },
  { name: 'IceChat', pattern: /^icechat\b/i },
  { name: 'Polari', pattern: /^polari\b/i },
  { name: 'Srain', pattern: /^srain\b/i },
  { name: 'Smuxi', pattern: /^smuxi\b/i },
  { name: 'Convos', pattern: /^convos\b/i },
  { name: 'ChatZilla', pattern: /\bchatzilla\b/i },
  { name: 'Pidgin', pattern: /^(?:pidgin|purple)\b/i },
  { name: 'Thunderbird', pattern: /^thunderbird\b/i },
  { name: 'Instantbird', pattern: /^instantbird\b/i },
  { name: 'Mibbit', pattern: /^mibbit\b/i },
  { name: 'qwebirc', pattern: /^qwebirc\b/i },
  { name: 'ERC', pattern: /^ERC\b/ },
  { name: 'Circe', pattern: /^circe\b/i },
  { name: 'BitchX', pattern: /^bitchx\b/i },
  { name: 'EPIC', pattern: /^epic\d?\b/i, version: /^epic\d?-(\d+(?:\.\d+)+)/i },
  { name: 'ircII', pattern: /^ircii\b/i, version: /^ircii (\d+)/i },
  { name: 'Limnoria', pattern: /^limnoria\b/i },
  { name: 'Supybot', pattern: /^supybot\b/i },
  { name: 'Sopel', pattern: /^sopel\b/i },
  { name: 'Eggdrop', pattern: /^eggdrop\b/i },
];
