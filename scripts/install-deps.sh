#!/usr/bin/env bash
# Installs the Debian packages that are missing, for one of two purposes:
#
#   install-deps.sh run    what building the binary and running `serve` (with its embedded
#                          PostgreSQL) needs: `make run`
#   install-deps.sh test   that, and what the tests need besides (`make test`): headless
#                          Chromium and chromedriver with Selenium from PyPI for the page's
#                          browser test, the MCP SDK from PyPI for the assistant's tests,
#                          Prometheus for the metrics scrape, openssl for the throwaway CA,
#                          libyaml for reading compose.yaml, curl, fonts
#
# With no argument it installs both sets; `--list` after the purpose prints its Debian packages
# and installs nothing. Safe to run again: it does nothing when everything is there. README.md
# ("Set up") lists the packages and what installing them costs.
set -euo pipefail

purpose="${1:-test}"

# libgnutls28-dev: serve's TLS pair (CGnuTLS; libmicrohttpd's own TLS is GnuTLS); postgresql:
# the server programs (initdb, pg_ctl, postgres) of the embedded cluster, and psql.
run_packages=(libpq-dev libmicrohttpd-dev zlib1g-dev libssl-dev libxml2-dev libzip-dev libgnutls28-dev postgresql)
# chromium, chromium-driver, fonts-dejavu-core: the page's browser test (Tests/DeploymentTests/ui);
# prometheus (with promtool) scrapes serve; openssl makes the throwaway CA; libyaml-dev: the
# tests' YAML reader (Tests/CYAML); curl: the scripts the tests run.
test_packages=(curl libyaml-dev chromium chromium-driver fonts-dejavu-core openssl prometheus)

case "$purpose" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 [run|test] [--list]" >&2; exit 64 ;;
esac
if [ "${2:-}" = --list ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

# From PyPI, for the tests only, with pip for the python3 they run: Selenium drives Debian's
# chromium through chromedriver (Tests/DeploymentTests/ui/*.py); the official MCP Python SDK
# drives `health-warehouse mcp` and `serve --mcp` (Tests/DeploymentTests/mcp/client.py),
# pinned: its client API moves between releases.
install_test_clients() {
  [ "$purpose" = test ] || return 0
  if ! python3 -c 'import selenium' 2>/dev/null; then
    echo "installing: selenium (PyPI)" >&2
    python3 -m pip install -q selenium 2>/dev/null || python3 -m pip install -q --break-system-packages selenium
  fi
  if ! python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
    echo "installing: mcp 2.3.0 (PyPI)" >&2
    python3 -m pip install -q mcp==2.3.0 2>/dev/null || python3 -m pip install -q --break-system-packages mcp==2.3.0
  fi
}

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_test_clients
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
install_test_clients
