#!/bin/sh
# Refuses to start while a password is still a placeholder: a value that, with case ignored and
# everything but letters and digits left out, holds `changeme` anywhere (.env.example's
# `change-me-…`, and `changeme`, `CHANGEME`, `change_me`, `Change Me`, `please-change-me`…).
# Then runs the command it is given:
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
  folded=$(printf '%s' "$value" | tr -cd 'A-Za-z0-9' | tr 'A-Z' 'a-z')
  case "$folded" in
    *changeme*) refused="$refused $name" ;;
  esac
done
if [ -n "$refused" ]; then
  echo "refusing to start: still the placeholder from .env.example:$refused" >&2
  echo "set each one in .env to a long random password, e.g. \`openssl rand -base64 24 | tr -d '/+='\`" >&2
  exit 78
fi
[ "$#" -gt 0 ] || exit 0
exec "$@"
