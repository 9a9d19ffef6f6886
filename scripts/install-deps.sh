#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the embedded PostgreSQL need, when
# they are missing. Safe to run again: it does nothing when everything is there.
set -euo pipefail

packages=(libpq-dev libmicrohttpd-dev zlib1g-dev libssl-dev libxml2-dev libzip-dev postgresql curl libyaml-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: missing packages (${missing[*]}) and not root; install them with apt-get" >&2; exit 1; }
  sudo="sudo"
fi
# The warehouse runs PostgreSQL clusters of its own; don't let the package make and start a
# system-wide one on port 5432.
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
  $sudo mkdir -p /etc/postgresql-common
  echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
