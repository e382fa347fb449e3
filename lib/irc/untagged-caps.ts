/**
 * The capabilities the matrix-org-irc adapter requests besides the library's own `sasl`: none of them puts
 * tags on lines. In a module of its own so that the plugin harness can know them without loading the library.
 */
export const UNTAGGED_CAPS: readonly string[] = [
  'account-notify',
  'away-notify',
  'cap-notify',
  'chghost',
  'extended-join',
  'invite-notify',
  'multi-prefix',
  'userhost-in-names',
];
