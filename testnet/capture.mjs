// capture.mjs - record raw IRC transcripts of a running test network (start.sh first) into a
// directory, one file per exchange, each line exactly as received (tags and formatting kept).
// What each file is: the FILES table below (also written to <dir>/INDEX.md).
// usage: set -a; . $RUN/network.env; set +a; node capture.mjs <out-dir> [help-dir]
//   help-dir: where the services' HELP (and Anope's XML-RPC) transcripts go (default <out-dir>/help)
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { IrcClient, sleep } from './lib/irc.mjs';

const env = process.env;
const HUB = Number(env.IRC_HUB_PORT), LEAF = Number(env.IRC_LEAF_PORT);
const KIND = env.IRC_NETWORK || 'inspircd+atheme';
const SERVICES = env.IRC_SERVICES || 'atheme';
const OPER = [env.IRC_OPER_NAME || 'botoper', env.IRC_OPER_PASS || 'operpass'];
const out = process.argv[2];
const helpOut = process.argv[3] || path.join(out, 'help');
if (!out || !HUB || !LEAF) { console.error('usage: node capture.mjs <out-dir> [help-dir]  (with network.env sourced)'); process.exit(2); }
fs.mkdirSync(out, { recursive: true });
fs.mkdirSync(helpOut, { recursive: true });
const index = [];
const ALICE_PASS = 's3cret-pass';

function save(dir, file, lines, what) {
  fs.writeFileSync(path.join(dir, file), lines.map((l) => `${l}\n`).join(''));
  index.push(`| ${path.relative(out, path.join(dir, file))} | ${what} |`);
  console.log(`${path.join(dir, file)}: ${lines.length} lines`);
}

// A client whose every raw line is kept, so a transcript can be cut from any point on.
async function client(port, nick, opts = {}) {
  const c = new IrcClient({ port, nick, user: opts.user || nick.toLowerCase().slice(0, 9), realname: `capture ${nick}`, ...opts });
  c.raw = [];
  c.onRaw = (r) => c.raw.push(r);
  await c.connect();
  if (!opts.noRegister) {
    const r = await c.register();
    if (!r.ok) throw new Error(`${nick}: ${r.last.raw}`);
    await idle(c, 600);   // let MOTD, services notices and the like arrive
  }
  return c;
}
// Resolves once no line arrived for `ms` (or after `max`).
async function idle(c, ms, max = 15000) {
  const t0 = Date.now();
  let n = -1;
  while (Date.now() - t0 < max) {
    if (c.raw.length === n) return;
    n = c.raw.length;
    await sleep(ms);
  }
}
// Sends `line` and returns what arrived until a line matches `end` (a command list), or until
// the client was idle for `quiet` ms (services answer with NOTICEs and no end marker).
async function exchange(c, line, { end = null, quiet = 1000, max = 20000 } = {}) {
  const from = c.raw.length;
  const ends = end ? [].concat(end) : null;
  c.send(line);
  const t0 = Date.now();
  let last = from, lastChange = Date.now();
  for (;;) {
    await sleep(50);
    const got = c.raw.slice(from);
    if (ends) {
      const i = got.findIndex((r) => { const p = r.replace(/^@\S+ /, '').split(' '); return ends.includes(p[0].startsWith(':') ? p[1] : p[0]); });
      if (i >= 0) { await sleep(100); return c.raw.slice(from, from + i + 1); }
    }
    if (c.raw.length !== last) { last = c.raw.length; lastChange = Date.now(); }
    if (!ends && Date.now() - lastChange >= quiet && c.raw.length > from) return c.raw.slice(from);
    if (Date.now() - t0 > max) return [...c.raw.slice(from), `# capture.mjs: no end (${ends ? ends.join('/') : 'quiet'}) within ${max} ms`];
  }
}

// ---------------------------------------------------------------------------------------------
// 1. registration as seen by a fresh client: CAP LS 302, 001-005, LUSERS, MOTD
{
  const c = await client(HUB, 'regtest', { noRegister: true });
  c.send('CAP LS 302');
  c.send('NICK regtest');
  c.send('USER regtest 0 * :capture regtest');
  await c.waitFor((m) => (m.command === 'CAP' && m.params[1] === 'LS' && m.params[2] !== '*') || m.command === '001', { timeout: 15000 }).catch(() => {});
  c.send('CAP END');
  await c.waitFor((m) => m.command === '376' || m.command === '422', { timeout: 15000 }).catch(() => {});
  await idle(c, 800);
  save(out, 'registration.txt', c.raw, 'fresh client on the hub: CAP LS 302, NICK, USER, CAP END; everything up to the end of the MOTD');
  save(out, 'lusers.txt', await exchange(c, 'LUSERS', { end: '266', quiet: 0 }), 'LUSERS (normal user)');
  c.quit();
}

// 2. accounts: alice (leaf) registers; the oper account registers too (services operator)
const alice = await client(LEAF, 'alice');
save(out, 'register.txt', await exchange(alice, `PRIVMSG NickServ :REGISTER ${ALICE_PASS} alice@example.com`, { quiet: 1500 }),
  'alice on the leaf: PRIVMSG NickServ :REGISTER s3cret-pass alice@example.com');
const opsy = await client(HUB, OPER[0]);
save(out, 'register-oper-account.txt', await exchange(opsy, `PRIVMSG NickServ :REGISTER ${OPER[1]} ${OPER[0]}@example.com`, { quiet: 1500 }),
  `the oper's nick on the hub registers its account (${OPER[0]}, a services operator by config)`);
save(out, 'oper-up.txt', await exchange(opsy, `OPER ${OPER[0]} ${OPER[1]}`, { end: ['381', '464', '491'] }), 'OPER on the hub');
await idle(opsy, 500);

// 3. IDENTIFY over PRIVMSG (bob on the leaf identifies to alice's account)
const bob = await client(LEAF, 'bob');
save(out, 'identify-wrong.txt', await exchange(bob, 'PRIVMSG NickServ :IDENTIFY alice wrong-pass', { quiet: 1500 }), 'bob: PRIVMSG NickServ :IDENTIFY alice wrong-pass');
save(out, 'identify-right.txt', await exchange(bob, `PRIVMSG NickServ :IDENTIFY alice ${ALICE_PASS}`, { quiet: 1500 }), `bob: PRIVMSG NickServ :IDENTIFY alice ${ALICE_PASS}`);
save(out, 'whois-self-after-identify.txt', await exchange(bob, 'WHOIS bob', { end: '318' }), 'bob (leaf) WHOIS bob after IDENTIFY');

// 4. WHOIS of a logged-in user (alice, on the leaf) from the hub, as a user and as an oper
const watcher = await client(HUB, 'watcher');
save(out, 'whois-user-as-user.txt', await exchange(watcher, 'WHOIS alice', { end: '318' }), 'watcher (hub, normal user): WHOIS alice (logged in, on the leaf)');
save(out, 'whois-user-remote-as-user.txt', await exchange(watcher, 'WHOIS alice alice', { end: ['318', '402'] }), 'watcher: WHOIS alice alice (asks the leaf: idle/signon)');
save(out, 'whois-user-as-oper.txt', await exchange(opsy, 'WHOIS alice', { end: '318' }), 'the oper (hub): WHOIS alice');
save(out, 'whois-user-remote-as-oper.txt', await exchange(opsy, 'WHOIS alice alice', { end: ['318', '402'] }), 'the oper: WHOIS alice alice');
save(out, 'whois-nickserv.txt', await exchange(watcher, 'WHOIS NickServ', { end: ['318', '401'] }), 'watcher: WHOIS NickServ');
save(out, 'ison-services.txt', await exchange(watcher, 'ISON NickServ ChanServ', { end: '303' }), 'watcher: ISON NickServ ChanServ');

// 5. channels: alice creates #test (topic) and &local on the leaf; watcher joins #test from the hub
save(out, 'join-create.txt', await exchange(alice, 'JOIN #test', { end: '366' }), 'alice (leaf) JOIN #test (creates it)');
await idle(alice, 800);
alice.send('TOPIC #test :capture topic'); await sleep(300);
save(out, 'join-local.txt', await exchange(alice, 'JOIN &local', { end: ['366', '403', '405', '448', '471', '473', '474', '475', '476', '477', '479'] }), 'alice JOIN &local (a server-local channel, where CHANTYPES has &)');
save(out, 'join-other.txt', await exchange(watcher, 'JOIN #test', { end: ['366'] }), 'watcher (hub) JOIN #test');
await idle(watcher, 800);
save(out, 'who-chan.txt', await exchange(watcher, 'WHO #test', { end: '315' }), 'watcher: WHO #test');
save(out, 'whox-chan.txt', await exchange(watcher, 'WHO #test %tcuihsnfar,42', { end: '315' }), 'watcher: WHO #test %tcuihsnfar,42');
save(out, 'whox-chan-as-oper.txt', await exchange(opsy, 'WHO #test %tcuihsnfar,42', { end: '315' }), 'the oper (not in #test): WHO #test %tcuihsnfar,42');
save(out, 'names.txt', await exchange(watcher, 'NAMES #test', { end: '366' }), 'watcher: NAMES #test');
save(out, 'list-hub.txt', await exchange(watcher, 'LIST', { end: ['323'] }), 'watcher (hub): LIST');
save(out, 'list-leaf.txt', await exchange(bob, 'LIST', { end: ['323'] }), 'bob (leaf, where &local lives): LIST');
save(out, 'links.txt', await exchange(watcher, 'LINKS', { end: '365' }), 'watcher: LINKS');
save(out, 'map-user.txt', await exchange(watcher, 'MAP', { end: ['017', '007', '481', '421'] }), 'watcher: MAP (normal user)');
save(out, 'map-oper.txt', await exchange(opsy, 'MAP', { end: ['017', '007', '481', '421'] }), 'the oper: MAP');
save(out, 'stats-u.txt', await exchange(watcher, 'STATS u', { end: '219' }), 'watcher: STATS u');
save(out, 'stats-P-user.txt', await exchange(watcher, 'STATS P', { end: ['219', '481'] }), 'watcher: STATS P (normal user)');
save(out, 'stats-P-oper.txt', await exchange(opsy, 'STATS P', { end: '219' }), 'the oper: STATS P');
save(out, 'stats-p-oper.txt', await exchange(opsy, 'STATS p', { end: '219' }), 'the oper: STATS p');
save(out, 'stats-o-oper.txt', await exchange(opsy, 'STATS o', { end: '219' }), 'the oper: STATS o');
save(out, 'time-services.txt', await exchange(watcher, 'TIME services.test.net', { end: ['391', '402', '421'], max: 4000 }), 'watcher: TIME services.test.net');
save(out, 'version-services.txt', await exchange(watcher, 'VERSION services.test.net', { end: ['351', '402'], max: 4000 }), 'watcher: VERSION services.test.net');
save(out, 'time-leaf.txt', await exchange(watcher, 'TIME leaf.test.net', { end: ['391', '402'] }), 'watcher (hub): TIME leaf.test.net');
save(out, 'version-leaf.txt', await exchange(watcher, 'VERSION leaf.test.net', { end: ['005', '351', '402'] }), 'watcher (hub): VERSION leaf.test.net');

// 6. SASL PLAIN where CAP LS offers sasl
const regLines = fs.readFileSync(path.join(out, 'registration.txt'), 'utf8');
if (/ CAP \S+ LS .*\bsasl\b/.test(regLines)) {
  for (const [file, pass] of [['sasl-plain-right.txt', ALICE_PASS], ['sasl-plain-wrong.txt', 'wrong-pass']]) {
    const c = await client(LEAF, `sasl${file.includes('right') ? 'R' : 'W'}`, { sasl: { account: 'alice', password: pass } });
    save(out, file, c.raw, `fresh client on the leaf: CAP LS 302, CAP REQ :sasl, AUTHENTICATE PLAIN (alice, ${pass === ALICE_PASS ? 'right' : 'wrong'} password), CAP END`);
    c.quit();
  }
}

// 7. HELP of every service there is, as a logged-in user (alice) and as the services operator
save(out, 'identify-oper-account.txt', await exchange(opsy, `PRIVMSG NickServ :IDENTIFY ${OPER[0]} ${OPER[1]}`, { quiet: 1500 }), 'the oper identifies to its account (already logged in by REGISTER: shows the answer)');
const bots = SERVICES.startsWith('anope') ? ['NickServ', 'ChanServ', 'OperServ', 'MemoServ', 'HostServ', 'BotServ'] : ['NickServ', 'ChanServ', 'OperServ', 'SaslServ'];
for (const [who, c] of [['user', alice], ['oper', opsy]]) {
  for (const bot of bots) {
    const lower = bot.toLowerCase();
    const help = await exchange(c, `PRIVMSG ${bot} :HELP`, { quiet: 1500 });
    save(helpOut, `${lower}-help.${who}.txt`, help, `${who === 'user' ? 'alice (logged in)' : 'the services operator (IRC oper, identified)'}: PRIVMSG ${bot} :HELP`);
    if (help.some((l) => /\bHELP ALL\b|\x02ALL\x02/i.test(l))) {
      save(helpOut, `${lower}-help-all.${who}.txt`, await exchange(c, `PRIVMSG ${bot} :HELP ALL`, { quiet: 1500 }), `${who}: PRIVMSG ${bot} :HELP ALL`);
    }
    if (help.some((l) => /\bHELP COMMANDS\b/i.test(l))) {
      save(helpOut, `${lower}-help-commands.${who}.txt`, await exchange(c, `PRIVMSG ${bot} :HELP COMMANDS`, { quiet: 1500 }), `${who}: PRIVMSG ${bot} :HELP COMMANDS`);
    }
    if (bot === 'NickServ' || bot === 'ChanServ') {
      save(helpOut, `${lower}-help-set.${who}.txt`, await exchange(c, `PRIVMSG ${bot} :HELP SET`, { quiet: 1500 }), `${who}: PRIVMSG ${bot} :HELP SET`);
    }
  }
}

for (const c of [alice, opsy, bob, watcher]) c.quit();
await sleep(300);

// 8. Anope XML-RPC: curl -v transcripts (request body first, then curl's trace)
if (SERVICES === 'anope' && env.ANOPE_XMLRPC_URL) {
  const call = (method, params) => `<?xml version="1.0"?>\n<methodCall>\n<methodName>${method}</methodName>\n<params>\n${
    params.map((p) => `<param><value><string>${p}</string></value></param>\n`).join('')}</params>\n</methodCall>\n`;
  const calls = [
    ['xmlrpc-checkAuthentication-right.txt', 'checkAuthentication', ['alice', ALICE_PASS]],
    ['xmlrpc-checkAuthentication-wrong.txt', 'checkAuthentication', ['alice', 'wrong-pass']],
    ['xmlrpc-checkAuthentication-unknown.txt', 'checkAuthentication', ['nosuchaccount', 'whatever']],
    ['xmlrpc-stats.txt', 'stats', []],
    ['xmlrpc-channel.txt', 'channel', ['#test']],
    ['xmlrpc-user.txt', 'user', ['alice']],
    ['xmlrpc-opers.txt', 'opers', []],
    ['xmlrpc-command.txt', 'command', ['NickServ', 'alice', 'INFO alice']],
    ['xmlrpc-nosuchmethod.txt', 'nosuchmethod', []],
  ];
  // alice must be online for user/channel: reconnect her, rejoin #test
  const a2 = await client(LEAF, 'alice');
  await exchange(a2, 'JOIN #test', { end: '366' });
  for (const [file, method, params] of calls) {
    const body = call(method, params);
    const bodyFile = path.join(helpOut, '.response');
    let verbose;
    try {
      verbose = execFileSync('sh', ['-c', 'curl -sS -v -H "Content-Type: text/xml" --data-binary "$1" -o "$3" "$2" 2>&1', 'x', body, env.ANOPE_XMLRPC_URL, bodyFile], { encoding: 'utf8' });
    } catch (e) { verbose = `${e.stdout}${e.stderr}`; }
    const response = fs.existsSync(bodyFile) ? fs.readFileSync(bodyFile, 'utf8') : '';
    fs.rmSync(bodyFile, { force: true });
    const lines = [`# POST ${env.ANOPE_XMLRPC_URL}  (curl -sS -v -H 'Content-Type: text/xml' --data-binary BODY)`, '# --- request body', ...body.trimEnd().split('\n'),
      '# --- curl -v', ...verbose.trimEnd().split('\n'), '# --- response body', ...response.trimEnd().split('\n')];
    fs.writeFileSync(path.join(helpOut, file), lines.join('\n') + '\n');
    index.push(`| ${path.relative(out, path.join(helpOut, file))} | XML-RPC ${method}(${params.map((p) => JSON.stringify(p)).join(', ')}) |`);
    console.log(`${file}`);
  }
  a2.quit();
}

// 9. Anope 2.1 JSON-RPC (rpc_user): what anope.checkCredentials answers, request and response as sent
if (SERVICES === 'anope21' && env.ANOPE_JSONRPC_URL) {
  const calls = [
    ['jsonrpc-checkCredentials-right.txt', ['alice', ALICE_PASS]],
    ['jsonrpc-checkCredentials-wrong.txt', ['alice', 'wrong-pass']],
    ['jsonrpc-checkCredentials-unknown.txt', ['nosuchaccount', 'whatever']],
  ];
  for (const [file, params] of calls) {
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'anope.checkCredentials', params, id: 'capture' });
    const response = await fetch(env.ANOPE_JSONRPC_URL, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    const lines = [`# POST ${env.ANOPE_JSONRPC_URL}  (Content-Type: application/json)`, '# --- request body', body,
      `# --- response: ${response.status} ${response.headers.get('content-type') ?? ''}`, (await response.text()).trimEnd()];
    fs.writeFileSync(path.join(helpOut, file), lines.join('\n') + '\n');
    index.push(`| ${path.relative(out, path.join(helpOut, file))} | JSON-RPC anope.checkCredentials(${params.map((p) => JSON.stringify(p)).join(', ')}) |`);
    console.log(file);
  }
}

fs.writeFileSync(path.join(out, 'INDEX.md'), `# ${KIND}: what each transcript is\n\nRecorded by testnet/capture.mjs on a fresh \`NETWORK=${KIND} testnet/start.sh\`. Every line is a raw IRC line as received (CR LF stripped); lines starting with \`# capture.mjs\` are the recorder's own notes.\n\n| file | what was sent, by whom |\n|---|---|\n${index.join('\n')}\n`);
await sleep(200);
process.exit(0);
