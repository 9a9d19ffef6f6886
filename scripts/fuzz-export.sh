#!/usr/bin/env bash
# Builds the export reader's libFuzzer harness (Sources/ExportFuzzer) with AddressSanitizer and
# runs it for a bounded time, seeded from the real exports in ../shared/external/apple-health
# (read in place and copied, cut to 64 KiB, into a temporary corpus at run time: never into the
# repository) and the test fixture. Every input goes through the filter, libxml2, the document
# reader and the mapping as export.xml, and through the GPX reader as a route file.
#
#   scripts/fuzz-export.sh                      # 20000 runs or 45 s, whichever comes first
#   RUNS=200000 SECONDS_MAX=600 scripts/fuzz-export.sh
#   scripts/fuzz-export.sh -seed=1              # extra libFuzzer flags pass through
#
# Crashes are written to .build/fuzz/artifacts/; replay one with a plain build:
#   swift build --product ExportFuzzer && .build/debug/ExportFuzzer .build/fuzz/artifacts/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-20000}"
SECONDS_MAX="${SECONDS_MAX:-45}"
SCRATCH=.build/fuzz
LOG="$SCRATCH/build-export.log"
mkdir -p "$SCRATCH/artifacts" "$SCRATCH/export-corpus"

echo "building ExportFuzzer (release, -sanitize=fuzzer,address)…"
if ! swift build -c release --scratch-path "$SCRATCH" --product ExportFuzzer \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
    -Xswiftc -enable-experimental-feature -Xswiftc Extern >"$LOG" 2>&1; then
    cat "$LOG"
    exit 1
fi
BIN="$SCRATCH/release/ExportFuzzer"

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
        head -c 65536 "$file" >"$SEEDS/$(basename "$file")"
    done
    for archive in "$EXTERNAL"/*.zip; do
        python3 - "$archive" "$SEEDS/$(basename "$archive").xml" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.lower().endswith('.xml') and not n.lower().endswith('_cda.xml')]
    if names:
        with z.open(names[0]) as f, open(sys.argv[2], 'wb') as out:
            out.write(f.read(65536))
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

"$BIN" -runs="$RUNS" -max_total_time="$SECONDS_MAX" -max_len=65536 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$DICT" -artifact_prefix="$SCRATCH/artifacts/" \
    "$SCRATCH/export-corpus" "$SEEDS" "$@"
