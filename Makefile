# benchlab: `make run` and `make test` install what is missing (Debian packages), build, and
# then run the example campaign or every test.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
CAMPAIGN   ?= examples/hello.toml
RESULTS    ?= results

DEB_PACKAGES := cmake ninja-build ccache g++ pkg-config \
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
  libboost1.81-dev libspdlog-dev libsqlite3-dev libssl-dev libgtest-dev \
  nlohmann-json3-dev libcli11-dev libtoml11-dev libcpp-httplib-dev sqlite3 \
  nginx-light wrk nghttp2-client procps prometheus-cpp-dev zlib1g-dev linux-perf \
  golang-github-google-pprof-dev liburing-dev git jq

.PHONY: all deps build build-all build-asan build-tsan test-tsan run dashboard frameworks frameworks-deps test test-unit check bench bench-coordinator clean format

all: build

deps:
	@scripts/install-deps.sh $(DEB_PACKAGES)
	@# The dashboard's page is bundled with npm (web/): Debian's Node.js only when none is there.
	@command -v npm >/dev/null 2>&1 || scripts/install-deps.sh nodejs npm

# Debian's Chromium, for the dashboard's browser test (tests/browser/): only `make test` needs it.
BROWSER_PACKAGES := chromium
.PHONY: deps-browser
deps-browser:
	@scripts/install-deps.sh $(BROWSER_PACKAGES)

# What the Debian package's tests need (tests/package/, docs/packaging.md): lintian, dpkg-dev's
# dpkg-shlibdeps, and Debian's prometheus for promtool. install-deps.sh keeps the install from
# starting prometheus's own service.
PACKAGE_TEST_PACKAGES := lintian prometheus dpkg-dev
.PHONY: deps-package
deps-package:
	@scripts/install-deps.sh $(PACKAGE_TEST_PACKAGES)

# The Debian package (CPack, cmake/Package.cmake, docs/packaging.md):
# $(DEB_DIR)/benchlab_VERSION_amd64.deb, for `apt install ./benchlab_VERSION_amd64.deb`. Only
# what the package holds is built, not the tests.
DEB_DIR     ?= $(BUILD)/package
DEB_TARGETS := benchlab hello-server benchlab_web benchlab_package_files
.PHONY: deb
deb: deps $(BUILD)/build.ninja
	@scripts/install-deps.sh dpkg-dev
	cmake --build $(BUILD) -j $(JOBS) --target $(DEB_TARGETS)
	cd $(BUILD) && cpack -G DEB -B $(abspath $(DEB_DIR))
	@ls -l $(DEB_DIR)/benchlab_*.deb

# Optimised as released, with line tables (-g1) rather than full debug information: stacks and
# profiles keep file:line, and the heaviest sources (gRPC) compile in about 3/4 of the time.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"

# The sanitizer tree: clang with AddressSanitizer and UndefinedBehaviorSanitizer over all of
# benchlab's code, which also builds the libFuzzer targets (cmake/Fuzz.cmake, docs/fuzzing.md),
# so the unit tests under ASan and the fuzzers share one compile. At -O1 with line tables (-g1):
# enough for ASan's and UBSan's stacks, quicker to build than -O0 -g and quicker to run.
$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_COMPILER=clang++ -DBENCHLAB_FUZZ=ON

# ThreadSanitizer: the unit and integration test executables alone (target benchlab_tests), at
# -O1 with line tables only (-g1), which is enough for TSan's stacks and cheaper to build.
$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DBENCHLAB_TSAN=ON

# What `make run` and `make dashboard` run: the binary, the bundled hello-server and the
# dashboard's bundle; not the tests (build-all).
RUN_TARGETS := benchlab hello-server benchlab_web
build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target $(RUN_TARGETS)

# Everything of the normal tree: the above, the unit, integration and end-to-end tests'
# programs, the fuzz-free benchmarks and the package's files.
build-all: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# A tree configured before it held the fuzzers (gcc, -DBENCHLAB_SANITIZE=ON) is not reused.
ASAN_TREE_CHECK = @grep -q '^BENCHLAB_FUZZ:BOOL=ON' $(ASAN_BUILD)/CMakeCache.txt || { \
  echo "$(ASAN_BUILD)/ is an older gcc ASan tree, not clang's ASan and fuzz tree: \
rm -rf $(ASAN_BUILD) and run make again" >&2; exit 2; }
build-asan: deps fuzz-deps $(ASAN_BUILD)/build.ninja
	$(ASAN_TREE_CHECK)
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The test binaries whose code runs threads against each other: the load generator's workers, the
# agent's calls, spool and call watcher, the coordinator's scheduler, registry and window protocol
# (a thread per pair, per load agent), and the whole lab in one process. The others test
# single-threaded logic already run under ASan; TSAN_TARGETS=benchlab_tests builds them all.
TSAN_TARGETS ?= unit_loadgen unit_agent_server unit_coordinator_server integration_tests
build-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TARGETS)

# The unit and integration tests under ThreadSanitizer. tests/tsan.supp silences reports inside
# the uninstrumented gRPC, protobuf and abseil alone; any other report fails the test (TSan exits
# 66) and is never run again. A test stuck for 300 s is stopped and run once more: Boost.Process
# allocates in the child between fork and exec (io_context::notify_fork), which can wait forever
# on a lock TSan's allocator held at the fork; seen once in about 630 tests, never outside TSan.
empty :=
space := $(empty) $(empty)
TSAN_LABELS = ^($(subst $(space),|,$(strip $(TSAN_TARGETS))))$$
TSAN_CTEST = cd $(TSAN_BUILD) && \
  TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp second_deadlock_stack=1 $$TSAN_OPTIONS" \
  ctest --output-on-failure -j 2 --timeout 300 --repeat after-timeout:2 -L '$(TSAN_LABELS)'
test-tsan: build-tsan
	$(TSAN_CTEST)

# The example campaign on the embedded lab; every run gets its own database under results/.
run: build
	@mkdir -p $(RESULTS)
	$(BUILD)/bin/benchlab run $(CAMPAIGN) --db $(RESULTS)/hello-$$(date +%Y%m%d-%H%M%S).db
	@echo "See it on the dashboard: make dashboard"

# The dashboard of the newest database under results/ (what `make run` wrote last), served by a
# coordinator on http://127.0.0.1:$(DASHBOARD_PORT)/ until Ctrl-C. DB=FILE picks another database.
DASHBOARD_PORT ?= 8080
dashboard: build
	@db="$(DB)"; [ -n "$$db" ] || db=$$(ls -t $(RESULTS)/*.db 2>/dev/null | head -n 1); \
	if [ -z "$$db" ]; then echo "no database under $(RESULTS)/: run 'make run' first, or give DB=FILE" >&2; exit 2; fi; \
	echo "dashboard of $$db: open http://127.0.0.1:$(DASHBOARD_PORT)/ (Ctrl-C stops it)"; \
	exec $(BUILD)/bin/benchlab coordinator --db "$$db" --listen 127.0.0.1:0 --http 127.0.0.1:$(DASHBOARD_PORT)

# The real-framework campaigns (examples/frameworks/, docs/frameworks.md): installs the apps'
# npm packages when missing (Bun included), runs each campaign into its own database under
# results/ and writes its Markdown report and JSON run of record beside it.
FRAMEWORK_CAMPAIGNS ?= node bun runtimes crosscheck db clean
frameworks-deps:
	@examples/frameworks/install.sh
frameworks: build frameworks-deps
	@mkdir -p $(RESULTS)
	@stamp=$$(date +%Y%m%d-%H%M%S); status=0; for c in $(FRAMEWORK_CAMPAIGNS); do \
	  out=$(RESULTS)/frameworks-$$c-$$stamp; \
	  $(BUILD)/bin/benchlab run examples/frameworks/$$c.toml --db $$out.db --progress plain || status=1; \
	  $(BUILD)/bin/benchlab report frameworks-$$c --db $$out.db --output $$out.md && \
	  $(BUILD)/bin/benchlab report frameworks-$$c --db $$out.db --format json --output $$out.json && \
	  echo "frameworks-$$c: $$out.md, $$out.json" || status=1; \
	done; exit $$status

# Every test: the normal build (unit, integration, end-to-end, dashboard), then the unit and
# integration tests again under AddressSanitizer and UndefinedBehaviorSanitizer (clang, the tree
# that also holds the fuzzers), and under
# ThreadSanitizer; first, every fuzz target runs for FUZZ_SMOKE_SECONDS (fuzz-smoke, below).
# Last, the layout of the C++ and the JavaScript (format-check, below).
test: deps-browser deps-package build-all build-asan build-tsan fuzz-smoke
	cd $(BUILD) && ctest --output-on-failure -j 2
	cd $(ASAN_BUILD) && ctest --output-on-failure -j 2
	$(TSAN_CTEST)
	@$(MAKE) --no-print-directory format-check

test-unit: build-all
	cd $(BUILD) && ctest --output-on-failure -j 2 -L unit

# Everyday work: the normal tree's unit and integration tests (about 2 minutes here), without
# the end-to-end, browser and package tests or the sanitizer trees that `make test` adds.
check: build-all
	cd $(BUILD) && ctest --output-on-failure -j 2 -LE '^(e2e|browser|package)$$'

# benchlab's load generator against wrk on the bundled hello-server (a benchmark, not a test).
bench: build
	@scripts/install-deps.sh wrk time
	bench/loadgen_vs_wrk.sh $(BUILD)/bin

# The coordinator at scale: 500 simulated agents heartbeating every second over real gRPC, then
# 10,000 windows with their samples into a fresh store (benchmarks, not tests: they print figures).
bench-coordinator: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target benchlab coordinator_fleet_bench store_bench
	$(BUILD)/bin/coordinator_fleet_bench
	$(BUILD)/bin/store_bench

# --- fuzzing (tests/fuzz/, docs/fuzzing.md) ---------------------------------------------------
# In the sanitizer tree ($(ASAN_BUILD), clang): benchlab's code under libFuzzer's
# instrumentation, ASan and UBSan, and the fuzz targets. `make fuzz SECONDS=N` runs each target for N seconds on its seed
# corpus (new inputs go under $(FUZZ_BUILD)/fuzz/, never into the repository); a crash fails
# it and names the saved input. `make test` runs each for FUZZ_SMOKE_SECONDS (fuzz-smoke).
FUZZ_BUILD         := $(ASAN_BUILD)
FUZZ_PACKAGES      := clang libclang-rt-14-dev
SECONDS            ?= 60
FUZZ_SMOKE_SECONDS ?= 20

.PHONY: fuzz fuzz-build fuzz-deps fuzz-smoke
fuzz-deps:
	@scripts/install-deps.sh $(FUZZ_PACKAGES)

# The fuzz targets live in the sanitizer tree ($(ASAN_BUILD), above).
fuzz-build: deps fuzz-deps $(FUZZ_BUILD)/build.ninja
	$(ASAN_TREE_CHECK)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers

fuzz: fuzz-build
	tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD) $(SECONDS)

fuzz-smoke: fuzz-build
	tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS)
# --- end of fuzzing ---------------------------------------------------------------------------

# --- layout (.clang-format, web/.prettierrc.json) --------------------------------------------
# `make format` lays out benchlab's C++ with clang-format and the dashboard's JavaScript and CSS
# with prettier (web/); `make format-check` changes nothing and fails when either differs.
CLANG_FORMAT   ?= clang-format
FORMAT_CXX     := git ls-files -- '*.cc' '*.h' ':!:tests/fuzz/corpus/' ':!:tests/fuzz/regressions/'
.PHONY: format-check format-deps
format-deps: deps
	@scripts/install-deps.sh clang-format
	@# prettier is one of web/'s devDependencies: npm ci unless web/node_modules holds the lock.
	@node web/install.mjs

format: format-deps
	$(CLANG_FORMAT) -i $$($(FORMAT_CXX))
	cd web && npm run --silent format

format-check: format-deps
	@status=0; \
	$(CLANG_FORMAT) --dry-run -Werror $$($(FORMAT_CXX)) || status=1; \
	(cd web && npm run --silent format:check) || status=1; \
	if [ $$status -ne 0 ]; then echo "format-check: run 'make format'" >&2; fi; exit $$status

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
