#!/usr/bin/env bash
# Builds the image and runs it for real against a throwaway PostgreSQL, as compose.yaml does:
# the owner role made by deploy/postgres/owner-role.sh, then the image's `migrate`,
# `token create` and `serve` (read-only root, no capabilities, no-new-privileges), one batch
# POSTed with the token, and its row read back from health.daily_summary. Prints each step
# and how long it took; removes what it started. Not part of `make test`.
#
#   bash scripts/docker-smoke.sh
#
# Without a Docker engine it prints `skipped: …` and exits 0. Base images: SWIFT_IMAGE and
# RUNTIME_IMAGE when set; else the official ones when present or pullable; else local ones
# made by scripts/docker-base-images.sh (debootstrap and the toolchain under /opt/swift).
# IMAGE names the image to build (default health-warehouse:smoke).
set -euo pipefail

repository="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repository"
image="${IMAGE:-health-warehouse:smoke}"
run_id="hw-smoke-$$"
started=$SECONDS

step() { printf '\n== %s\n' "$*"; }
elapsed() { echo "   ($(( SECONDS - $1 )) s)"; }
fail() { echo "docker-smoke: FAILED: $*" >&2; exit 1; }

if ! command -v docker >/dev/null 2>&1; then
  echo "skipped: no docker command on this machine (install docker.io and start dockerd)"
  exit 0
fi
if ! docker info >/dev/null 2>&1; then
  echo "skipped: no Docker engine answers (start dockerd, or check DOCKER_HOST)"
  exit 0
fi

# --- base images ------------------------------------------------------------------------------
have_image() { docker image inspect "$1" >/dev/null 2>&1 || timeout 120 docker pull -q "$1" >/dev/null 2>&1; }
step "base images"
if [ -z "${SWIFT_IMAGE:-}" ] || [ -z "${RUNTIME_IMAGE:-}" ]; then
  if [ -z "${SWIFT_IMAGE:-}" ] && docker image inspect health-warehouse-swift:6.3-bookworm >/dev/null 2>&1; then
    SWIFT_IMAGE=health-warehouse-swift:6.3-bookworm
  elif [ -z "${SWIFT_IMAGE:-}" ] && have_image swift:6.3-bookworm; then
    SWIFT_IMAGE=swift:6.3-bookworm
  fi
  if [ -z "${RUNTIME_IMAGE:-}" ] && have_image debian:bookworm-slim; then RUNTIME_IMAGE=debian:bookworm-slim; fi
  if [ -z "${SWIFT_IMAGE:-}" ] || [ -z "${RUNTIME_IMAGE:-}" ]; then
    echo "   official images unavailable: making local ones (scripts/docker-base-images.sh)"
    t=$SECONDS
    RUNTIME_IMAGE="${RUNTIME_IMAGE:-debian:bookworm-slim}" SWIFT_IMAGE="${SWIFT_IMAGE:-health-warehouse-swift:6.3-bookworm}" \
      bash scripts/docker-base-images.sh
    RUNTIME_IMAGE="${RUNTIME_IMAGE:-debian:bookworm-slim}"
    SWIFT_IMAGE="${SWIFT_IMAGE:-health-warehouse-swift:6.3-bookworm}"
    elapsed $t
  fi
fi
echo "   SWIFT_IMAGE=$SWIFT_IMAGE RUNTIME_IMAGE=$RUNTIME_IMAGE"

# --- the image --------------------------------------------------------------------------------
step "docker build -t $image"
t=$SECONDS
docker build --build-arg "SWIFT_IMAGE=$SWIFT_IMAGE" --build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE" -t "$image" . \
  >"/tmp/$run_id-build.log" 2>&1 || { tail -n 30 "/tmp/$run_id-build.log" >&2; fail "docker build (log: /tmp/$run_id-build.log)"; }
build_seconds=$(( SECONDS - t ))
rm -f "/tmp/$run_id-build.log"
echo "   $(docker image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1 / 1000000}')"
elapsed $t

# --- a throwaway PostgreSQL -------------------------------------------------------------------
cleanup() {
  docker rm -f "$run_id-serve" "$run_id-db" >/dev/null 2>&1 || true
  docker network rm "$run_id" >/dev/null 2>&1 || true
}
trap cleanup EXIT

step "PostgreSQL 15 from $RUNTIME_IMAGE (image health-warehouse-smoke-postgres:15)"
t=$SECONDS
# Debian's postgresql-15 in the runtime base image: a superuser `health` with a password, TCP
# with scram-sha-256, data in the container (gone with it).
postgres_dockerfile="$(cat <<'DOCKERFILE'

ARG BASE
FROM ${BASE}
RUN mkdir -p /etc/postgresql-common \
 && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \
 && apt-get -q update \
 && DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
USER postgres
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/smoke
CMD ["sh", "-c", "printf '%s\\n' \"$POSTGRES_PASSWORD\" > /tmp/pw && initdb -U health --pwfile=/tmp/pw --auth-local=trust --auth-host=scram-sha-256 >/dev/null && rm /tmp/pw && echo 'host all all 0.0.0.0/0 scram-sha-256' >> \"$PGDATA/pg_hba.conf\" && echo 'CREATE DATABASE health' | postgres --single -D \"$PGDATA\" postgres >/dev/null && exec postgres -c listen_addresses='*' -c unix_socket_directories=/tmp"]
DOCKERFILE
)"
docker build -q --build-arg "BASE=$RUNTIME_IMAGE" -t health-warehouse-smoke-postgres:15 - <<<"$postgres_dockerfile" \
  >"/tmp/$run_id-postgres.log" 2>&1 || { cat "/tmp/$run_id-postgres.log" >&2; fail "building the PostgreSQL image"; }
rm -f "/tmp/$run_id-postgres.log"
secret() { head -c 18 /dev/urandom | base64 | tr -d '/+='; }
superuser_password="$(secret)"
owner_password="$(secret)"
docker network create "$run_id" >/dev/null
docker run -d --name "$run_id-db" --network "$run_id" --network-alias db \
  -e POSTGRES_PASSWORD="$superuser_password" -v "$repository/deploy:/deploy:ro" \
  health-warehouse-smoke-postgres:15 >/dev/null
for _ in $(seq 1 60); do
  docker exec "$run_id-db" pg_isready -q -h /tmp -d health 2>/dev/null && break
  sleep 1
done
docker exec "$run_id-db" pg_isready -q -h /tmp -d health || { docker logs "$run_id-db" >&2; fail "PostgreSQL did not start"; }
elapsed $t

step "owner role (deploy/postgres/owner-role.sh, as compose's owner-role job runs it)"
t=$SECONDS
docker exec -e PGHOST=db -e PGUSER=health -e PGDATABASE=health -e PGPASSWORD="$superuser_password" \
  -e OWNER_LOGIN=health_owner -e OWNER_PASSWORD="$owner_password" \
  "$run_id-db" sh /deploy/refuse-placeholders.sh sh /deploy/postgres/owner-role.sh 2>&1 | sed 's/^/   /'
elapsed $t

# Every run of the image as compose.yaml runs it: as the owner role, read-only root, /tmp on
# tmpfs, no capabilities, no new privileges.
hardened=(--network "$run_id" --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges:true
          -e "DATABASE_URL=host=db port=5432 dbname=health user=health_owner" -e "PGPASSWORD=$owner_password")

step "placeholder password refused"
t=$SECONDS
set +e
refused="$(docker run --rm "${hardened[@]}" -e PGPASSWORD=change-me-warehouse-owner "$image" migrate 2>&1)"
status=$?
set -e
echo "   exit $status: $refused" | head -n 1
[ "$status" -eq 78 ] || fail "the image started with a change-me password (exit $status)"
elapsed $t

step "migrate"
t=$SECONDS
docker run --rm "${hardened[@]}" "$image" migrate 2>&1 | sed 's/^/   /'
elapsed $t

step "token create --person smoke"
t=$SECONDS
token="$(docker run --rm "${hardened[@]}" "$image" token create --person smoke 2>"/tmp/$run_id-token.log")" \
  || { cat "/tmp/$run_id-token.log" >&2; fail "token create"; }
sed 's/^/   /' "/tmp/$run_id-token.log"
rm -f "/tmp/$run_id-token.log"
[ -n "$token" ] || fail "token create printed no token"
echo "   a token of ${#token} characters (not shown)"
elapsed $t

step "serve (published on 127.0.0.1 only)"
t=$SECONDS
docker run -d --name "$run_id-serve" "${hardened[@]}" -p 127.0.0.1::8080 "$image" serve --listen 0.0.0.0:8080 >/dev/null
port="$(docker port "$run_id-serve" 8080/tcp | head -n 1 | sed 's/.*://')"
for _ in $(seq 1 60); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = "200" ] && break
  sleep 1
done
health="$(curl -s "http://127.0.0.1:$port/healthz")" || true
echo "   GET /healthz on 127.0.0.1:$port: $health"
[ -n "$health" ] || { docker logs "$run_id-serve" >&2; fail "serve did not answer /healthz"; }
elapsed $t

step "POST one batch with the token"
t=$SECONDS
fixture="../shared/fixtures/contract-example.json"
if [ -f "$fixture" ]; then
  body="$(cat "$fixture")"
  echo "   body: $fixture"
else
  # The README's curl body: one step-count sample on 2026-08-21.
  body='{"schemaVersion":1,"connectivityTest":false,"exportId":"6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70","generatedAt":"2026-08-21T12:00:00.000+02:00","batchSequence":1,"isFinalBatch":true,"basis":"window","windowStart":"2026-08-20T12:00:00.000+02:00","windowEnd":"2026-08-21T12:00:00.000+02:00","occasionStart":"2026-08-20T12:00:00.000+02:00","occasionEnd":"2026-08-21T12:00:00.000+02:00","samples":[{"uuid":"A1B2C3D4-0000-4000-8000-000000000001","id":"3cae82ce29b729ba872bdd31f1db79f0a31013c3546710bd4fe1adb8192ec011","type":"HKQuantityTypeIdentifierStepCount","group":"activity","source":"com.apple.Health","start":"2026-08-21T10:25:30.000+02:00","end":"2026-08-21T10:25:30.000+02:00","kind":"quantity","value":42,"unit":"count"}]}'
  echo "   body: the README's curl body ($fixture is absent)"
fi
unauthorized="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/" -H 'Content-Type: application/json' --data-binary "$body")"
echo "   without the token: $unauthorized"
[ "$unauthorized" = "401" ] || fail "a batch without the token was answered $unauthorized, not 401"
answer="$(curl -s -w '\n%{http_code}' -X POST "http://127.0.0.1:$port/" -H 'Content-Type: application/json' \
  -H "Authorization: Bearer $token" --data-binary "$body")"
status="$(tail -n 1 <<<"$answer")"
echo "   with the token: $status $(head -n 1 <<<"$answer")"
[ "$status" = "200" ] || { docker logs "$run_id-serve" >&2; fail "the batch was answered $status, not 200"; }
elapsed $t

step "the row in health.daily_summary"
t=$SECONDS
row="$(docker exec "$run_id-db" psql -X -h /tmp -U health -d health -tA \
  -c "SELECT day, steps, sleep_min, workouts FROM health.daily_summary WHERE person = 'smoke' AND day = '2026-08-21'")"
echo "   day|steps|sleep_min|workouts: $row"
[ "$(cut -d '|' -f 2 <<<"$row")" = "42" ] || fail "health.daily_summary has no 42 steps for person smoke on 2026-08-21"
owner="$(docker exec "$run_id-db" psql -X -h /tmp -U health -d health -tA \
  -c "SELECT string_agg(DISTINCT relowner::regrole::text, ',') FROM pg_class WHERE relnamespace = 'health_store'::regnamespace")"
echo "   health_store's tables are owned by: $owner"
[ "$owner" = "health_owner" ] || fail "health_store is owned by $owner, not health_owner alone"
elapsed $t

step "serve's log"
docker logs "$run_id-serve" 2>&1 | sed 's/^/   /' | tail -n 5

echo
echo "docker-smoke: passed in $(( SECONDS - started )) s (image build $build_seconds s)"
