# The two set-up commands of the README:
#   make run    install what building and serving need, build, and start the receiver on an
#               embedded PostgreSQL
#   make test   install that and what the tests need besides, and run the whole test suite
.PHONY: deps test-deps build run test fuzz bench

deps:
	@bash scripts/install-deps.sh run

test-deps:
	@bash scripts/install-deps.sh test

build: deps
	swift build -c release --product health-warehouse

run: build
	.build/release/health-warehouse serve $(ARGS)

# The CLI tests run the built binary, so build everything first; then bounded, seeded
# libFuzzer runs over the JSON and CSV decoders and over the export reader.
# The whole suite runs on clusters with an ICU collation (en-US) and the server in a zone far
# from UTC; the per-day rules, the rollups and the people round trip run a second time on the C
# locale (nothing may depend on either). The healthd and Stridee contract suites run a second
# time over HTTPS (the receiver serving TLS with a throwaway CA, every client speaking it).
test: test-deps
	swift build --build-tests
	swift test --skip-build
	HEALTH_WAREHOUSE_TEST_LOCALE=C swift test --skip-build --filter "ClusterLocaleTests|ViewsRulesTests|ViewsTimeTests|RollupPropertyTests|PersonTests"
	HEALTH_WAREHOUSE_TEST_TLS=1 swift test --skip-build --filter "ReceiverContractTests|StrideeEndpointTests"
	$(MAKE) fuzz

fuzz:
	RUNS=$${RUNS:-100000} bash scripts/fuzz-payload.sh -seed=1

# Figures next to same-run baselines (docs/benchmarks.md), on a throwaway cluster with
# PostgreSQL's default durability (fsync on): the receiver section (serve vs the bare upsert,
# the write path without HTTP and the reference's Node receiver; 1, 2 and 4 clients) and the
# ingest section (vs COPY). SECTION picks sections (receiver, ingest, views, stridee, apple-export,
# memory, metrics, tls, people; several space-separated), DURABILITY=fast runs with fsync off, ARGS go to each section run.
SECTION ?= receiver ingest
DURABILITY ?= default
bench: deps
	swift build -c release --product health-warehouse
	swift build -c release --product health-warehouse-bench
	set -e; for section in $(SECTION); do \
	  .build/release/health-warehouse-bench $$section --durability $(DURABILITY) $(ARGS); \
	done
