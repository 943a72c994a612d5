# Galewatch availability pipeline. `make help` lists the targets.
GO       ?= go
BIN      := bin/orchestrator
# The embedded default Postgres lives here when DATABASE_URL is unset.
export GALEWATCH_HOME ?= $(CURDIR)/.galewatch
STATICCHECK_VERSION := v0.8.2

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_\/-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Run
.PHONY: build
build: ## Build bin/orchestrator
	$(GO) build -o $(BIN) ./cmd/orchestrator

.PHONY: run
run: build ## Embedded DB (unless DATABASE_URL), apply fleet/demo.yaml, serve with the demo: live feed + the Ardnave Saturday
	./$(BIN) fleet apply fleet/demo.yaml
	./$(BIN) serve --demo --demo-fleet fleet/demo.yaml

.PHONY: db-down
db-down: build ## Stop every embedded Postgres cluster of this clone (data stays in .galewatch/)
	./$(BIN) db down --all

##@ Develop
.PHONY: generate
generate: ## Regenerate internal/db from sql/ with the pinned sqlc
	$(GO) tool sqlc generate

.PHONY: verify
# promtool checks the alerting rules when installed (make deps fetches it as
# root); REQUIRE_PROMTOOL=1 (CI) fails without it instead of skipping.
PROMTOOL ?= promtool
verify: deps ## Fail if generated code or the schema dumps are stale, design.md's rule table cites a missing name, a file cites a document or issue number a reader does not have, go.mod is untidy, code is unformatted or the alerting rules fail promtool
	$(GO) tool sqlc diff
	$(GO) run ./internal/schema/dump -check
	$(GO) test -count=1 ./docs ./alerts
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@if command -v $(PROMTOOL) >/dev/null 2>&1; then \
		$(PROMTOOL) check rules alerts/galewatch.rules.yml && $(PROMTOOL) test rules alerts/galewatch.rules.test.yml; \
	elif [ -n "$(REQUIRE_PROMTOOL)" ]; then echo "promtool not found and REQUIRE_PROMTOOL is set: run make deps as root, or put promtool on PATH"; exit 1; \
	else echo "promtool not found: alerting rules not checked (make deps as root fetches it)"; fi

.PHONY: schema
schema: deps ## Write sql/schema/control.sql and shard.sql: the schema the migrations leave (pg_dump of freshly migrated databases)
	$(GO) run ./internal/schema/dump

.PHONY: lint
lint: ## go vet, and staticcheck when it installs through the module proxy
	$(GO) vet ./...
	@if $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -version >/dev/null 2>&1; then \
		$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...; \
	else echo "staticcheck unavailable through the module proxy; skipped"; fi

##@ Test
.PHONY: deps
deps: ## Install what the tests need when missing (Postgres server, Chromium), or say what to install
	@scripts/test-deps.sh

.PHONY: test
# make test's own embedded cluster (when DATABASE_URL is unset), removed
# when it ends: its databases go with it, none dropped one by one.
TEST_HOME := $(CURDIR)/.galewatch/test
# The two longest packages first: go test runs two at a time here, in this
# order, and the longest started last ran alone for a minute at the end.
TEST_PACKAGES := ./internal/rollup ./cmd/orchestrator ./...

test: deps ## Run every test against real Postgres (its own embedded cluster, removed at the end, when DATABASE_URL is unset)
	@GALEWATCH_HOME=$(TEST_HOME) $(GO) run ./internal/testdb/sweep -discard
	status=0; GALEWATCH_HOME=$(TEST_HOME) $(GO) test -count=1 -parallel 4 -timeout 15m $(TEST_PACKAGES) || status=$$?; \
	GALEWATCH_HOME=$(TEST_HOME) $(GO) run ./internal/testdb/sweep -discard; exit $$status

.PHONY: test-faults
test-faults: deps ## Fault tests: kill -9, shard servers stopped or hung, control DB restarted (real processes, separate servers; a few minutes)
	$(GO) test -tags faults -count=1 -run '^TestFault' -timeout 15m -v ./cmd/orchestrator

SOAK_LIVE ?= 10m
# SOAK_CPUS=1.2: the soak and every process it starts in a cgroup v1 cpu
# group capped at 1.2 CPUs (root; the group is removed at the end).
SOAK_CPUS ?=
.PHONY: soak
soak: deps ## Bounded soak: 31,250 readings/s over HTTP for SOAK_LIVE (10m) + a 7.5-h replay, then one alone, real processes, 5 servers; report in test-artifacts/soak/ (~13 min)
	SOAK_LIVE=$(SOAK_LIVE) SOAK_CPUS=$(SOAK_CPUS) $(GO) test -tags soak -count=1 -run '^TestSoak$$' -timeout 25m -v ./cmd/orchestrator

.PHONY: soak-cgroup
soak-cgroup: ## make soak short of CPU: capped at SOAK_CPUS (default 1.2) CPUs by a cgroup v1 cpu group (root)
	$(MAKE) soak SOAK_CPUS=$(or $(SOAK_CPUS),1.2)

.PHONY: test/race
test/race: deps ## Tests with the race detector
	$(GO) test -race -count=1 -timeout 20m ./...

# A count of executions, not a duration: with a duration, Go 1.26's fuzz
# coordinator can fail a target at its deadline having found nothing
# ("context deadline exceeded", golang/go#75804, fixed in Go 1.27; seen in
# .ci/run on FuzzCSV).
FUZZTIME ?= 300000x
.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME executions (default 300000x): NDJSON, CSV, storable text, fleet file
	$(GO) test -run '^$$' -fuzz '^FuzzNDJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/reading
	$(GO) test -run '^$$' -fuzz '^FuzzCSV$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/reading
	$(GO) test -run '^$$' -fuzz '^FuzzStorableText$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/reading
	$(GO) test -run '^$$' -fuzz '^FuzzFleetParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/fleet

##@ Benchmarks (results go into BENCHMARKS.md)
.PHONY: bench-ingest
bench-ingest: ## One Ardnave farm-day through the ingest writer vs raw COPY, then an all-duplicate replay
	$(GO) test -run '^$$' -bench BenchmarkIngestFarmDay -benchtime 1x -timeout 60m -v ./internal/ingest

.PHONY: bench-ingest-file
bench-ingest-file: ## `orchestrator ingest FILE.csv` vs psql \copy of the same file, one shard and three
	$(GO) test -run '^$$' -bench BenchmarkIngestFile -benchtime 1x -timeout 60m -v ./cmd/orchestrator

.PHONY: bench-rollup
bench-rollup: ## One Ardnave farm-day rollup through River vs the bare aggregate SQL; one dirty turbine
	$(GO) test -run '^$$' -bench BenchmarkRollupFarmDay -benchtime 1x -timeout 60m -v ./internal/rollup

.PHONY: bench-lanes
bench-lanes: ## Live bodies every second, alone and beside a held-back half-day by HTTP, `orchestrator ingest`, in-process, and the demo's story day (~5 min)
	$(GO) test -run '^$$' -bench BenchmarkLanes -benchtime 1x -timeout 30m -v ./cmd/orchestrator
