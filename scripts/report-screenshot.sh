#!/usr/bin/env bash
# Renders a `tune bench --format html` report in headless Chromium and saves a PNG
# screenshot: scripts/report-screenshot.sh REPORT.html OUT.png [WIDTHxHEIGHT]
# Installs Chromium (Debian package `chromium`) when it is missing.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
report=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1100x2600}
if [ ! -f "$report" ]; then
  echo "$0: $1: no such file" >&2
  exit 2
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
  browser=$(command -v chromium)
fi
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="${size/x/,}" --screenshot="$out" "file://$report" 2>/dev/null
test -s "$out"
echo "wrote $out"
