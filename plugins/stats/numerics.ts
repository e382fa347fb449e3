/**
 * The numerics the collector's line handlers read, named once (RFC 1459, RFC 2812 and the servers' own), so
 * that a handler table reads like the protocol: `[RPL_WHOISACCOUNT](message) { … }`.
 */

/** `324 me #chan +ntl 10`: a channel's modes. */
export const RPL_CHANNELMODEIS = '324';
/** `329 me #chan 1700000000`: when a channel was formed. */
export const RPL_CREATIONTIME = '329';
/** `330 me nick account :is logged in as` */
export const RPL_WHOISACCOUNT = '330';
/** `332 me #chan :topic` */
export const RPL_TOPIC = '332';
/** `333 me #chan setter 1700000000` */
export const RPL_TOPICWHOTIME = '333';
/** `338 me nick [ident@host] ip :Actual user@host, actual IP` */
export const RPL_WHOISACTUALLY = '338';
/** `353 me = #chan :@alice +bob carol` */
export const RPL_NAMREPLY = '353';
/** `366 me #chan :End of /NAMES list.` */
export const RPL_ENDOFNAMES = '366';
/** `378 me nick :is connecting from ident@host ip` */
export const RPL_WHOISHOST = '378';
/** `405 me #chan :You have joined too many channels` */
export const ERR_TOOMANYCHANNELS = '405';
/** `471 me #chan :Cannot join channel (+l)` */
export const ERR_CHANNELISFULL = '471';
/** `473 me #chan :Cannot join channel (+i)` */
export const ERR_INVITEONLYCHAN = '473';
/** `474 me #chan :Cannot join channel (+b)` */
export const ERR_BANNEDFROMCHAN = '474';
/** `475 me #chan :Cannot join channel (+k)` */
export const ERR_BADCHANNELKEY = '475';
/** `477 me #chan :You need a registered nick to join that channel` */
export const ERR_NEEDREGGEDNICK = '477';
/** `489 me #chan :Cannot join channel; SSL users only (+z)` */
export const ERR_SECUREONLYCHAN = '489';
/** `520 me #chan :Only IRC operators may join this channel (+O)` */
export const ERR_OPERONLY = '520';
