#!/usr/bin/env bash
# Builds the HealthPayload libFuzzer harness (Sources/PayloadFuzzer) with AddressSanitizer and
# runs it for a bounded number of inputs, seeded from the test fixtures. Every input goes through
# the healthd JSON and CSV decoders and the Stridee workout and wellness decoders.
#
#   scripts/fuzz-payload.sh                  # 200000 runs
#   RUNS=1000000 scripts/fuzz-payload.sh     # more
#   scripts/fuzz-payload.sh -max_total_time=600   # extra libFuzzer flags pass through
#
# Crashes are written to .build/fuzz/artifacts/; replay one with a plain build:
#   swift build --product PayloadFuzzer && .build/debug/PayloadFuzzer .build/fuzz/artifacts/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-200000}"
SCRATCH=.build/fuzz
LOG="$SCRATCH/build.log"
mkdir -p "$SCRATCH/artifacts" "$SCRATCH/corpus"

# Separate scratch path: the sanitizer flags never touch the normal .build.
# SwiftPM also compiles the package's build-tool plugin (EmbedMigrationsTool) with these flags while
# planning and fails to link it; that is harmless here, so the log is shown only if PayloadFuzzer fails.
echo "building PayloadFuzzer (release, -sanitize=fuzzer,address)…"
if ! swift build -c release --scratch-path "$SCRATCH" --product PayloadFuzzer \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
    -Xswiftc -enable-experimental-feature -Xswiftc Extern >"$LOG" 2>&1; then
    cat "$LOG"
    exit 1
fi
BIN="$SCRATCH/release/PayloadFuzzer"

DICT="$SCRATCH/payload.dict"
cat >"$DICT" <<'TOKENS'
"{"
"}"
"["
"]"
":"
","
"\""
"\\"
"\\u0000"
"\\ud800"
"\\udc00"
"\\ud83d\\ude00"
"\x0d"
"\x0a"
"\x0d\x0a"
"\x00"
"\xef\xbb\xbf"
"\xff"
"\xed\xa0\x80"
"true"
"false"
"null"
"NaN"
"Infinity"
"-0"
"1e400"
"1e-400"
"1e-301"
"9e999"
"1e1001"
"2147483648"
"-2147483649"
"\"schemaVersion\":1"
"\"connectivityTest\":true"
"\"samples\":["
"\"kind\":\"quantity\""
"\"kind\":\"category\""
"\"kind\":\"workout\""
"\"value\":"
"\"activityType\":"
"\"durationSeconds\":"
"\"distanceMeters\":null"
"\"uuid\":\"A1B2C3D4-0000-4000-8000-000000000001\""
"2026-08-21T10:25:30.000+02:00"
"2026-02-29T00:00:00.000Z"
"schemaVersion,exportId,generatedAt,batchSequence,isFinalBatch,windowStart,windowEnd,uuid"
"uuid,uuid"
"\"\""
"\"format\":\"healthkit.v1\","
"\"format\":\"healthkit.wellness.v1\","
"\"uuid\":\"5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4\","
"\"serverType\":\"RUNNING\","
"\"startDate\":"
"\"endDate\":"
"\"duration\":"
"\"heartRate\":["
"\"route\":["
"\"t\":\"2026-10-01T06:02:12Z\","
"\"lat\":"
"\"lon\":"
"\"altitude\":null,"
"\"v\":"
"\"items\":["
"\"kind\":\"daily\""
"\"kind\":\"sleep\""
"\"kind\":\"pulse_ox\""
"\"kind\":\"stress\""
"\"calendarDate\":\"2026-10-01\","
"\"startTime\":"
"\"endTime\":"
"\"tzOffsetSeconds\":"
"\"final\":false"
"\"stages\":[{\"stage\":\"core\",\"start\":"
"\"samples\":[{\"t\":"
"2026-10-01T08:02:11.123456789+0200"
"-05:30"
"95.2"
"-180.5"
"1e15"
"1e16"
"64801"
TOKENS

# The first corpus folder collects new inputs; the fixtures are read-only seeds.
"$BIN" -runs="$RUNS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$DICT" -artifact_prefix="$SCRATCH/artifacts/" \
    "$SCRATCH/corpus" Tests/HealthPayloadTests/Fixtures "$@"
