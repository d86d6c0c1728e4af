#!/usr/bin/env bash
# Debian packages some tests drive for real: Chromium + chromedriver (browser tests of the run report
# and the UI), docker-compose (`docker-compose config` on the generated compose file), PostgreSQL (`data.sql`
# tests start a server of their own with initdb + pg_ctl) and the Prometheus
# Pushgateway. Installed with apt-get when this runs as root on Debian/Ubuntu; otherwise it prints the
# command and carries on (the tests that need a package skip, naming it).
set -uo pipefail
PACKAGES=(chromium chromium-driver docker-compose prometheus-pushgateway nghttp2-client postgresql)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "note: not installing ${missing[*]} (needs root and apt-get); tests that need them skip." >&2
  echo "      To run them: sudo apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "Installing Debian packages for the browser, compose, PostgreSQL and Pushgateway tests: ${missing[*]} (about 2 minutes)..."
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/yaml-tfx-apt.log 2>&1; then
  apt-get update -q >>/tmp/yaml-tfx-apt.log 2>&1
  apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/yaml-tfx-apt.log 2>&1 \
    || echo "note: apt-get could not install ${missing[*]} (log: /tmp/yaml-tfx-apt.log); tests that need them skip." >&2
fi
exit 0
