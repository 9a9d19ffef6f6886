#!/bin/sh
# Refuses to start while a password is still a placeholder of .env.example (a value that starts
# with `change-me`), then runs the command it is given:
#
#   refuse-placeholders.sh COMMAND [ARG…]
#
# Every variable whose name ends in PASSWORD is checked (PGPASSWORD, POSTGRES_PASSWORD,
# OWNER_PASSWORD, READER_PASSWORD, GRAFANA_ADMIN_PASSWORD…). The message names the variable,
# never its value. The warehouse image's entrypoint, and compose.yaml's db and one-shot jobs,
# start through it.
set -eu

refused=""
for name in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*PASSWORD\)=.*/\1/p'); do
  eval "value=\${$name}"
  case "$value" in
    change-me*|CHANGE-ME*|Change-me*) refused="$refused $name" ;;
  esac
done
if [ -n "$refused" ]; then
  echo "refusing to start: still the placeholder from .env.example:$refused" >&2
  echo "set each one in .env to a long random password, e.g. \`openssl rand -base64 24 | tr -d '/+='\`" >&2
  exit 78
fi
[ "$#" -gt 0 ] || exit 0
exec "$@"
