# Thin wrapper over meson. `make run` installs what is missing, builds and
# runs the main job; `make test` and `make sanitize` are what CI runs.
#
# The main job is `drivegraph $(RUN_ARGS)`: a full-throttle launch of the
# flagship sedan (--preset launch), summary on stdout, CSV and plot in out/.
# Change RUN_GRAPH / RUN_PRESET (launch, coast, brake) / RUN_SCENARIO here or
# on the command line (make run RUN_GRAPH=graphs/x.json RUN_PRESET=brake ...);
# a RUN_SCENARIO file replaces the preset.

BUILD_DIR      ?= build
ASAN_BUILD_DIR ?= build-asan
MESON          ?= meson
NINJA          ?= ninja

RUN_GRAPH    ?= graphs/sedan_rwd_automatic.json
RUN_PRESET   ?= launch
RUN_SCENARIO ?=
RUN_OUT      ?= out
RUN_DRIVER    = $(if $(RUN_SCENARIO),--scenario $(RUN_SCENARIO),--preset $(RUN_PRESET))
RUN_NAME     ?= $(basename $(notdir $(RUN_GRAPH)))_$(if $(RUN_SCENARIO),$(basename $(notdir $(RUN_SCENARIO))),$(RUN_PRESET))
RUN_CSV      ?= $(RUN_OUT)/$(RUN_NAME).csv
RUN_PLOT     ?= $(RUN_OUT)/$(RUN_NAME).png
RUN_ARGS     ?= sim $(RUN_GRAPH) $(RUN_DRIVER) --csv $(RUN_CSV) --plot $(RUN_PLOT)
RUN_BIN       = $(if $(filter /%,$(BUILD_DIR)),,./)$(BUILD_DIR)/drivegraph

# Debian packages the build and the tests need.
DEB_PACKAGES := meson ninja-build pkg-config gcc libjansson-dev libyaml-dev libutf8proc-dev check libsubunit-dev \
                libplplot-dev plplot-driver-cairo graphviz python3-jsonschema python3-scipy \
                clang libclang-rt-dev valgrind \
                python3-cffi python3-dev python3-numpy python3-pytest python3-distributed \
                python3-matplotlib libminizip-dev libxml2-utils

# Any sanitizer report fails the test that triggered it.
SAN_ENV := ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all deps build python run test sanitize bench bench-host format-check docs fmu-cross-check clean

all: build

# Installs only what dpkg says is missing, so a ready machine (and CI on one)
# never touches apt.
deps:
	@command -v dpkg-query >/dev/null 2>&1 || { \
	  echo "deps: not a Debian system; install: $(DEB_PACKAGES)"; exit 0; }; \
	missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  echo "deps: installing$$missing"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	@test -f $(BUILD_DIR)/build.ninja || $(MESON) setup $(BUILD_DIR)
	$(NINJA) -C $(BUILD_DIR)

run: build
	@mkdir -p $(RUN_OUT) $(dir $(RUN_CSV)) $(dir $(RUN_PLOT))
	$(RUN_BIN) $(RUN_ARGS)
	@echo
	@echo "run: the plot is $(RUN_PLOT) (engine speed, vehicle speed, gear, slip over time)"
	@echo "run: the CSV is $(RUN_CSV)"

# The Python package for Debian's /usr/bin/python3: the build's extension
# module (which carries the library: nothing to find at run time) and the
# package's files, installed into that Python's site directory
# (/usr/local/lib/python3.X/dist-packages as root) by meson's install tag
# "python" alone: the library, headers and tool are not installed.
python: build
	$(MESON) install -C $(BUILD_DIR) --no-rebuild --tags python

# The suite 'python' (pytest) imports the build's copy of the package
# (PYTHONPATH=$(BUILD_DIR)/python); `make python` installs that same copy.
test: python
	$(MESON) test -C $(BUILD_DIR) --print-errorlogs

# A separate build directory, so the normal build stays fast to iterate on.
# -Db_lundef=false: clang cannot link shared objects with sanitizers and -z defs.
sanitize: deps
	@test -f $(ASAN_BUILD_DIR)/build.ninja || \
	  $(MESON) setup $(ASAN_BUILD_DIR) -Db_sanitize=address,undefined -Db_lundef=false
	$(NINJA) -C $(ASAN_BUILD_DIR)
	$(SAN_ENV) $(MESON) test -C $(ASAN_BUILD_DIR) --print-errorlogs

# The bench program (bench/, not installed): the framework against the
# hand-written baselines on their graph twins, the cost ratio of each.
# `drivegraph bench GRAPH` times any graph. BENCH_ARGS: e.g. --reps 9.
BENCH_BIN   = $(if $(filter /%,$(BUILD_DIR)),,./)$(BUILD_DIR)/bench/drivegraph-bench
BENCH_ARGS ?=
bench: build
	$(BENCH_BIN) graphs/bench/sedan_baseline.json $(BENCH_ARGS)
	@echo
	$(BENCH_BIN) graphs/bench/axle_baseline.json $(BENCH_ARGS)
	@echo
	$(BENCH_BIN)-floor graphs/bench/axle_baseline.json

# Which C files clang-format would change under .clang-format, with the
# count of lines and the total: a report, not run by CI; nothing is
# rewritten. FILES limits it to some files; FORMAT_ARGS=-d shows the diffs.
# Exit status 1 while any file differs (the tree has not been reformatted).
FILES       ?=
FORMAT_ARGS ?=
format-check:
	scripts/format-check.sh $(FORMAT_ARGS) $(FILES)

# 100 sedan drivetrains coupled to 100 planar vehicle hosts at 1 kHz in one
# thread (examples/host/bench_host.c): CPU time per host step and the
# real-time factor per core (docs/host.md, docs/performance.md). Also
# `meson test -C build --benchmark`.
bench-host: build
	./$(BUILD_DIR)/examples/host/bench_host . 100 20

# The example FMUs (examples/fmu) and their FMI cross-check files, in the
# cross-check repository's layout under $(RUN_OUT)/fmi-cross-check
# (docs/fmu.md); tests/test_fmu.sh makes and checks them too.
fmu-cross-check: build
	python3 scripts/fmu-cross-check.py $(RUN_BIN) $(RUN_OUT)/fmi-cross-check

# docs/blocks.md is generated from the parameter tables (a test checks it).
docs: build
	./$(BUILD_DIR)/drivegraph blocks --markdown > docs/blocks.md

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) out
