#!/usr/bin/env bash
# The main job: tsuzuri-daemon on the session bus (or on a private bus started here when there is none),
# then real conversions through the D-Bus client. A daemon already serving the bus is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
cleanup=()
trap 'for cmd in "${cleanup[@]}"; do eval "$cmd"; done' EXIT

if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
  command -v dbus-daemon >/dev/null || { echo "demo: no session bus and no dbus-daemon (apt-get install dbus)" >&2; exit 1; }
  pidfile=$(mktemp)
  DBUS_SESSION_BUS_ADDRESS=$(dbus-daemon --session --fork --print-address=1 --print-pid=3 3>"$pidfile")
  export DBUS_SESSION_BUS_ADDRESS
  cleanup+=("kill $(cat "$pidfile") 2>/dev/null; rm -f $pidfile")
  echo "demo: started a private session bus"
fi

if ! "$bin/tsuzuri-client" status >/dev/null 2>&1; then
  "$bin/tsuzuri-daemon" "$@" &
  cleanup=("kill $! 2>/dev/null; wait $! 2>/dev/null" "${cleanup[@]}")
fi
echo "demo: model status: $("$bin/tsuzuri-client" status --wait 30)"

set -x
"$bin/tsuzuri-client" convert きょうはいいてんきですね --n 5
"$bin/tsuzuri-client" type kyouhaiitenkidesune --key space
"$bin/tsuzuri-client" type kokodehakimonowonugu --key space --key Right --key space --key space
