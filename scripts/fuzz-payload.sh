#!/usr/bin/env bash
# Builds the two libFuzzer harnesses with AddressSanitizer and runs each for a bounded number of
# inputs:
# - PayloadFuzzer (Sources/PayloadFuzzer), seeded from the test fixtures: every input goes
#   through the healthd JSON and CSV decoders, the Stridee workout and wellness decoders, and
#   Health Auto Export's (with no grouping and with days);
# - ExportFuzzer (Sources/ExportFuzzer), seeded from the real exports in
#   ../shared/external/apple-health (read in place and copied, cut to 16 KiB, into a temporary
#   corpus at run time: never into the repository) and the test fixture: every input goes
#   through the export reader (filter, libxml2, document reader, mapping) as export.xml, and
#   through the GPX reader as a route file.
#
#   scripts/fuzz-payload.sh                  # 200000 payload runs; 20000 export runs or 45 s
#   RUNS=1000000 EXPORT_RUNS=200000 EXPORT_SECONDS=600 scripts/fuzz-payload.sh     # more
#   ONLY=export scripts/fuzz-payload.sh      # one harness (payload or export)
#   scripts/fuzz-payload.sh -seed=1          # extra libFuzzer flags pass to both
#
# Crashes are written to .build/fuzz/artifacts/; replay one with a plain build:
#   swift build --product PayloadFuzzer && .build/debug/PayloadFuzzer .build/fuzz/artifacts/crash-…
#   swift build --product ExportFuzzer && .build/debug/ExportFuzzer .build/fuzz/artifacts/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-200000}"
EXPORT_RUNS="${EXPORT_RUNS:-20000}"
EXPORT_SECONDS="${EXPORT_SECONDS:-45}"
ONLY="${ONLY:-}"
SCRATCH=.build/fuzz
mkdir -p "$SCRATCH/artifacts" "$SCRATCH/corpus" "$SCRATCH/export-corpus"

# Separate scratch path: the sanitizer flags never touch the normal .build.
# SwiftPM also compiles the package's build-tool plugin (EmbedMigrationsTool) with these flags while
# planning and fails to link it; that is harmless here, so the log is shown only if the harness fails.
build() {
    echo "building $1 (release, -sanitize=fuzzer,address)…"
    if ! swift build -c release --scratch-path "$SCRATCH" --product "$1" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
        -Xswiftc -enable-experimental-feature -Xswiftc Extern >"$SCRATCH/build-$1.log" 2>&1; then
        cat "$SCRATCH/build-$1.log"
        exit 1
    fi
}

if [ "$ONLY" != export ]; then
build PayloadFuzzer
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
"{\"data\":{"
"\"metrics\":["
"\"workouts\":["
"\"symptoms\":["
"\"name\":\"step_count\""
"\"name\":\"heart_rate\""
"\"name\":\"blood_pressure\""
"\"name\":\"sleep_analysis\""
"\"units\":\"%\""
"\"units\":\"mi\""
"\"qty\":"
"\"date\":\"2025-03-10 10:00:00 +0100\""
"\"date\":\"2025-03-10\""
"\"Min\":"
"\"Avg\":"
"\"systolic\":"
"\"startDate\":"
"\"value\":\"Core\""
"\"totalSleep\":"
"\"sleepEnd\":"
"\"heartRateData\":["
"\"latitude\":"
"\"timestamp\":"
"\"distance\":{\"qty\":"
TOKENS

# The first corpus folder collects new inputs; the fixtures are read-only seeds.
"$BIN" -runs="$RUNS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$DICT" -artifact_prefix="$SCRATCH/artifacts/" \
    "$SCRATCH/corpus" Tests/HealthPayloadTests/Fixtures "$@"
fi
[ "$ONLY" = payload ] && exit 0
# Seeds: the real exports and route files, and the export.xml inside each real export.zip.
SEEDS="$(mktemp -d)"
trap 'rm -rf "$SEEDS"' EXIT
EXTERNAL=../shared/external/apple-health
cp Tests/AppleExportTests/Fixtures/small-export/apple_health_export/export.xml "$SEEDS/fixture.xml"
for gpx in Tests/AppleExportTests/Fixtures/small-export/apple_health_export/workout-routes/*.gpx; do
    cp "$gpx" "$SEEDS/fixture-$(basename "$gpx")"
done
if [ -d "$EXTERNAL" ]; then
    for file in "$EXTERNAL"/*.xml "$EXTERNAL"/*.gpx; do
        head -c 16384 "$file" >"$SEEDS/$(basename "$file")"
    done
    for archive in "$EXTERNAL"/*.zip; do
        python3 - "$archive" "$SEEDS/$(basename "$archive").xml" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.lower().endswith('.xml') and not n.lower().endswith('_cda.xml')]
    if names:
        with z.open(names[0]) as f, open(sys.argv[2], 'wb') as out:
            out.write(f.read(16384))
PY
    done
else
    echo "note: $EXTERNAL is not beside this checkout; seeding from the fixture only"
fi

DICT="$SCRATCH/export.dict"
cat >"$DICT" <<'TOKENS'
"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
"<!DOCTYPE HealthData ["
"<!ATTLIST "
"]>"
"<HealthData locale=\"en_US\">"
"</HealthData>"
"<ExportDate value=\""
"<Record "
"</Record>"
"/>"
"type=\""
"HKQuantityTypeIdentifierStepCount"
"HKQuantityTypeIdentifierHeartRate"
"HKCategoryTypeIdentifierSleepAnalysis"
"HKCategoryValueSleepAnalysisAsleepCore"
"sourceName=\""
"unit=\""
"value=\""
"startDate=\""
"endDate=\""
"2019-06-11 15:00:00 +0100"
"20150915113529+0200"
"2019-06-11T22:00:42Z"
"<MetadataEntry key=\""
"<HeartRateVariabilityMetadataList>"
"<InstantaneousBeatsPerMinute bpm=\""
"<Correlation "
"<Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" "
"duration=\""
"durationUnit=\"min\""
"<WorkoutStatistics "
"<WorkoutRoute "
"<FileReference path=\"/workout-routes/route.gpx\"/>"
"<Location date=\""
"latitude=\""
"longitude=\""
"<ActivitySummary dateComponents=\""
"<!--"
"-->"
"<![CDATA["
"]]>"
"<?pi "
"?>"
"&#10;"
"&#38;"
"&amp;"
"&lt;"
"\x0b"
"<trkpt lat=\""
"lon=\""
"<ele>"
"</ele>"
"<time>"
"</time>"
"<extensions><speed>"
"<hAcc>"
TOKENS

build ExportFuzzer
BIN="$SCRATCH/release/ExportFuzzer"
"$BIN" -runs="$EXPORT_RUNS" -max_total_time="$EXPORT_SECONDS" -max_len=16384 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$DICT" -artifact_prefix="$SCRATCH/artifacts/" \
    "$SCRATCH/export-corpus" "$SEEDS" "$@"

