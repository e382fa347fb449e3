#!/usr/bin/env bash
# capture.sh KIND OUT-DIR [HELP-DIR] - start a network of KIND on free loopback ports, record the
# transcripts of capture.mjs into OUT-DIR (HELP and XML-RPC into HELP-DIR), stop the network.
# e.g. testnet/capture.sh hybrid+anope test/fixtures/networks/hybrid+anope test/fixtures/networks/anope-2.0
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 KIND OUT-DIR [HELP-DIR]" >&2; exit 2; }
read -r HUB_PORT LEAF_PORT HUB_SPORT LEAF_SPORT RPC_PORT HTTPD_PORT HUB_TLS_PORT LEAF_TLS_PORT < <(node -e '
  const net = require("node:net"); const s = [];
  (async () => { for (let i = 0; i < 8; i++) { const v = net.createServer(); await new Promise((r) => v.listen(0, "127.0.0.1", r)); s.push(v); }
    console.log(s.map((v) => v.address().port).join(" ")); s.forEach((v) => v.close()); })();')
export HUB_PORT LEAF_PORT HUB_SPORT LEAF_SPORT RPC_PORT HTTPD_PORT HUB_TLS_PORT LEAF_TLS_PORT NETWORK=$1
export TESTNET_RUN=$(mktemp -d /tmp/ircnet.XXXXXX) TESTNET_CURRENT=$(mktemp -u /tmp/ircnet-capture.XXXXXX)
trap '"$HERE/stop.sh" "$TESTNET_RUN" >/dev/null' EXIT
"$HERE/start.sh" >/dev/null
set -a; . "$TESTNET_RUN/network.env"; set +a
rm -rf "$2"; [ -n "${3:-}" ] && rm -rf "$3"
node "$HERE/capture.mjs" "$2" ${3:+"$3"}
