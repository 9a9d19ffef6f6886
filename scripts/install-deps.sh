#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the embedded PostgreSQL need, when
# they are missing, and from PyPI Selenium for the page's browser test (headless Chromium from
# Debian: chromium, chromium-driver) and the official MCP SDK, the client the assistant's
# server is tested with. Safe to run again: it does nothing when everything is there.
set -euo pipefail

# Selenium drives Debian's chromium through chromedriver (Tests/DeploymentTests/ui/*.py); pip
# for the python3 the tests run.
install_selenium() {
  python3 -c 'import selenium' 2>/dev/null && return 0
  echo "installing: selenium (PyPI)" >&2
  python3 -m pip install -q selenium 2>/dev/null || python3 -m pip install -q --break-system-packages selenium
}

# The official MCP Python SDK drives `health-warehouse mcp` and `serve --mcp` in the tests
# (Tests/DeploymentTests/mcp/client.py), pinned: its client API moves between releases.
install_mcp_client() {
  python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null && return 0
  echo "installing: mcp 2.3.0 (PyPI)" >&2
  python3 -m pip install -q mcp==2.3.0 2>/dev/null || python3 -m pip install -q --break-system-packages mcp==2.3.0
}

# libgnutls28-dev: serve's TLS pair (CGnuTLS; libmicrohttpd's own TLS is GnuTLS); openssl makes
# the tests' throwaway CA; prometheus (with promtool) scrapes serve in the tests.
packages=(libpq-dev libmicrohttpd-dev zlib1g-dev libssl-dev libxml2-dev libzip-dev postgresql curl libyaml-dev
          chromium chromium-driver fonts-dejavu-core libgnutls28-dev openssl prometheus)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_selenium
  install_mcp_client
  exit 0
fi

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
install_selenium
install_mcp_client
