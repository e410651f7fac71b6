# Quarry's build, test and benchmark entry points. `make test` is the one
# command that runs every test (Go, fuzz seeds, the REST suite again on
# PostgreSQL, the JS SDK end-to-end suite, again on PostgreSQL, and the Parse
# Dashboard browser test).

SHELL     := /bin/bash
GO        ?= go
BIN       := bin/quarry
FUZZTIME  ?= 5000x
BENCHTIME ?= 1s
PKGS      := ./...

.PHONY: build test test-go test-postgres test-e2e test-dashboard lint bench fuzz cover clean
.PHONY: test-e2e-postgres

build:
	$(GO) build -o $(BIN) ./cmd/quarry

# The Go packages and the REST suite on PostgreSQL run side by side: the
# first keeps both cores busy, the second mostly waits on PostgreSQL, and
# each test server has a database of its own (random names). Then the SDK
# suites (both majors, and on PostgreSQL) and the browser suite run side
# by side too: they mostly wait on their servers, each starts servers of
# its own on free ports, and their packages are installed once before.
test: lint
	$(MAKE) --no-print-directory -j2 --output-sync=target test-go test-postgres
	$(MAKE) --no-print-directory build
	$(MAKE) --no-print-directory -j4 --output-sync=target test-e2e-current test-e2e-sdk6 test-dashboard test-e2e-postgres

# Installs the SDK and Dashboard suites' packages when missing or stale
# (a no-op without npm: the suites then skip or fail as they say).
.PHONY: e2e-deps
e2e-deps:
	@if command -v npm >/dev/null 2>&1; then \
		for d in e2e e2e/dashboard; do \
			(cd $$d && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }) || exit 1; \
		done; \
	fi

# cloud's TestSDKSurface reads the official parse package's API from
# e2e/node_modules, so test-go installs it first when npm is there.
test-go: e2e-deps
	$(GO) test -count=1 $(PKGS)

# The REST suite again (scenarios, the permission matrix, operators), and
# the server-side subscriptions' (delivery from _changes, one owner), with
# every test server on PostgreSQL: a fresh database per server on the
# local PostgreSQL (PGADMIN), dropped afterwards. Without PostgreSQL it is
# skipped loudly, except in CI where that fails.
PGADMIN ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
test-postgres:
	@if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then \
		if [ "$$CI" = "true" ]; then echo "FAIL: PostgreSQL is not on 127.0.0.1:5432; CI must run the suite on it"; exit 1; fi; \
		echo "!!! SKIPPING the REST suite on PostgreSQL: nothing listens on 127.0.0.1:5432 !!!"; exit 0; \
	fi; \
	QUARRY_TEST_DATABASE_URI='$(PGADMIN)' $(GO) test -count=1 ./transport/ ./subscribe/

# The end-to-end suite drives the built binary with the official `parse`
# npm SDK, on its current major and again on the older major 6. Without
# Node it is skipped loudly, except in CI where that fails.
test-e2e: test-e2e-current test-e2e-sdk6

.PHONY: test-e2e-current test-e2e-sdk6
test-e2e-current: build
	@$(call npm_suite,the SDK suite (current major),npm test)

test-e2e-sdk6: build
	@$(call npm_suite,the SDK suite on the older major (parse 6),npm run test:sdk6)

# npm_suite runs an e2e npm script against the built binary, or skips
# loudly without npm (fails in CI).
define npm_suite
	if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$CI" = "true" ]; then echo "FAIL: npm not found; CI must run $(1)"; exit 1; fi; \
		echo "!!! SKIPPING $(1): npm not found (install Node.js to run it) !!!"; exit 0; \
	fi; \
	cd e2e && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && \
	echo "--- $(1) ---" && QUARRY_BIN=$(CURDIR)/$(BIN) $(2)
endef

# The SDK suite again (current major only) with every server on PostgreSQL:
# each test file's server gets a fresh database on PGADMIN's server, created
# before it starts and dropped after it stops (e2e/harness.js). (The
# engine's differential property test runs on PostgreSQL within test-go:
# fuzz's TestEngineVersusReferenceOnPostgres.) Without npm or PostgreSQL it
# is skipped loudly, except in CI.
test-e2e-postgres: build
	@if ! command -v npm >/dev/null 2>&1 || ! command -v psql >/dev/null 2>&1 || ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then \
		if [ "$$CI" = "true" ]; then echo "FAIL: npm, psql or PostgreSQL on 127.0.0.1:5432 missing; CI must run the SDK suite on PostgreSQL"; exit 1; fi; \
		echo "!!! SKIPPING the e2e SDK suite on PostgreSQL: npm, psql or PostgreSQL on 127.0.0.1:5432 missing !!!"; exit 0; \
	fi; \
	cd e2e && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && \
	QUARRY_BIN=$(CURDIR)/$(BIN) QUARRY_E2E_POSTGRES='$(PGADMIN)' npm test

# The real Parse Dashboard (e2e/dashboard, pinned in its package.json) in
# headless Chromium against the built binary. It reuses e2e/harness.js, so
# e2e's packages are installed too. Without Chromium (CHROMIUM_BIN, default
# /usr/bin/chromium) or npm it is skipped loudly, except in CI where that
# fails. Screenshots land in e2e/artifacts/dashboard/.
CHROMIUM_BIN ?= /usr/bin/chromium
test-dashboard: build
	@if ! command -v npm >/dev/null 2>&1 || [ ! -x "$(CHROMIUM_BIN)" ]; then \
		if [ "$$CI" = "true" ]; then echo "FAIL: npm or $(CHROMIUM_BIN) not found; CI must run the dashboard test (apt-get install -y chromium)"; exit 1; fi; \
		echo "!!! SKIPPING the Parse Dashboard browser test: npm or $(CHROMIUM_BIN) not found (apt-get install -y chromium) !!!"; exit 0; \
	fi; \
	for d in e2e e2e/dashboard; do \
		(cd $$d && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }) || exit 1; \
	done; \
	cd e2e/dashboard && QUARRY_BIN=$(CURDIR)/$(BIN) CHROMIUM_BIN=$(CHROMIUM_BIN) npm test

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./bench/ ./store/
	@if [ -n "$(PROFILE)" ]; then $(MAKE) --no-print-directory bench-profile PROFILE="$(PROFILE)"; fi

# Load suite (bench/README.md, "Load suite"). bench-load runs every workload
# against an in-process Quarry, or against URL=http://127.0.0.1:PORT/parse;
# LOADFLAGS passes more flags, e.g. LOADFLAGS='-workloads get,count -duration 10s'.
# bench-profile (or `make bench PROFILE=dir`) writes CPU and allocation
# profiles of Quarry under each workload into PROFILE (default bench/profiles).
# bench-compare measures Quarry against Parse Server and writes bench/RESULTS.md.
.PHONY: bench-load bench-profile bench-compare
LOADFLAGS ?=
bench-load:
	$(GO) run ./bench/load $(if $(URL),-url $(URL),-inprocess) -ceiling $(LOADFLAGS)

bench-profile:
	$(GO) run ./bench/load -inprocess -profile $(or $(PROFILE),bench/profiles) $(LOADFLAGS)

bench-compare:
	bash bench/compare/run.sh

# Runs every fuzz target for a number of inputs (count-based: a time-based
# -fuzztime can end in the coordinator's "context deadline exceeded" race);
# crashers land in testdata/fuzz and are committed as regression seeds
# (plain `go test` replays them). Package fuzz holds the cross-package
# targets (the engine against a reference evaluator, HTTP routes, LiveQuery
# frames); a long run of one: go test ./fuzz -run '^$' -fuzz
# FuzzEngineVersusReference -fuzztime 10m -parallel 1
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
		for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
			echo "fuzz $$pkg $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 200x $$pkg; \
		done; \
	done

cover:
	$(GO) test -coverprofile=cover.out $(PKGS) && $(GO) tool cover -func=cover.out | tail -1

clean:
	rm -rf bin cover.out

# Import from a real Parse Server (transfer's TestImportFromRealParseServer):
# the Parse Server pinned in bench/compare/parse-server (npm ci by the test
# when missing or stale; node_modules is ignored by git), seeded through its
# REST API on a fresh PostgreSQL database, imported with its files and
# queried on both servers. test-go runs it as well, and with CI=true it
# fails rather than skips without Node.js or PostgreSQL; this target runs it
# alone.
.PHONY: test-parse-import
test-parse-import:
	CI=$${CI:-true} $(GO) test -count=1 -run 'TestImportFromRealParseServer' -v ./transfer/
