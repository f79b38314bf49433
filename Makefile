# Two commands do all the set-up on a fresh machine (python3, Java 17+ and Maven present):
#   make demo   -- create/update the virtual environment and the Storm module, then run the main job
#   make test   -- the same set-up, then the Storm module's JUnit tests and the whole Python test suite
# Maven keeps what it downloads in its local repository (~/.m2/repository, or MAVEN_OPTS=-Dmaven.repo.local=DIR).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
COMPILED := $(VENV)/.compiled
# Spark's driver classes in one archive (streamplace/profile/class_archive.py): every later Spark
# start maps them (a small `profile` 19 s against 26 s); made after the environment, beside Maven
ARCHIVE := $(VENV)/share/streamplace/spark-driver.jsa
OUT    ?= out/demo
MVN    ?= mvn
SETUP_JOBS ?= 3
MVN_FLAGS ?= -B -q
# the Storm module's two jars: the harness (runners, spec topology, monitor) and the Nimbus plugin
STORM_JAR := storm/target/streamplace-storm-harness.jar
STORM_PLUGIN_JAR := storm/target/streamplace-storm-plugin.jar
STORM_SRC := storm/pom.xml $(shell find storm/src/main storm/conf -type f 2>/dev/null)

.PHONY: demo test bench lock clean storm storm-tested

# The installer does not byte-compile and compileall then compiles on both cores (-j 0): 23 s
# against 35 s for pip compiling on one, from pip's cache. Both are needed: leaving modules to be
# compiled on first import costs every process that compile where PYTHONDONTWRITEBYTECODE is set
# (make test took 484 s against 426 s so, on a machine that sets it). The compiling is a target of
# its own, so that it runs beside the class archive and Maven rather than before them. The
# libraries' own test suites (2,000 of the 6,100 modules, most of them pandas') are never imported:
# not compiled (6.9 s and 12.6 CPU s against 12.0 s and 22.9, one run each, 2026-11-30).
# streamplace's own modules (installed editable: in the checkout, not in .venv) are compiled too:
# until 2026-12-01 every CLI process the tests start compiled them anew (about 0.06 CPU s each)
#
# The packages are installed by uv (pinned in constraints.txt, installed by pip): from its cache it
# links them into .venv in about 1 s where pip unpacked them in 12-15 s (2026-12-01, this machine).
# It tries its cache alone first: the index this machine reaches answers every revalidation of
# pyspark's source archive as modified, and uv then builds pyspark again (about 20 s). Anything
# missing from the cache (a fresh machine, a new pin) fails that try, and uv installs with the index.
UV_INSTALL = $(BIN)/uv pip install --quiet --python $(BIN)/python -c constraints.txt -e '.[test]'
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt uv
	$(UV_INSTALL) --offline 2>/dev/null || $(UV_INSTALL)
	touch $(STAMP)

$(COMPILED): $(STAMP) $(shell find streamplace -name '*.py' 2>/dev/null)
	$(BIN)/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib streamplace >/dev/null
	touch $(COMPILED)

# without Java or on a failure the note is printed and Spark starts without the archive
$(ARCHIVE): $(STAMP)
	$(BIN)/python -m streamplace.profile.class_archive $@ || true

# Maven's JVM takes storm/.mvn/jvm.config (C1 only, serial collector; the pom says why)
STORM_BUILD = $(MVN) $(MVN_FLAGS) -f storm/pom.xml package -DskipTests

# The Storm module: one Maven build makes both jars (and classpath.txt, storm-home/, the class
# archives). Its stamp, not the jars, records when it ran: a class archive holds its jars' times and
# a JVM ignores it once a jar is touched after it was written (the runners and the testbed's JVMs then
# started without it, silently, after a `make storm` that touched the jar, until 2026-12-01).
STORM_BUILT := storm/target/.built
$(STORM_BUILT): $(STORM_SRC)
	$(STORM_BUILD)
	touch $@

# both made by that build; built again if one alone is missing
$(STORM_JAR) $(STORM_PLUGIN_JAR): $(STORM_BUILT)
	@test -f $@ || $(STORM_BUILD)

storm: $(STORM_JAR) $(STORM_PLUGIN_JAR)

demo: $(STAMP) $(COMPILED) $(ARCHIVE) $(STORM_JAR) $(STORM_PLUGIN_JAR)
	$(BIN)/streamplace demo -o $(OUT)

# the environment and the Maven build (with its JUnit tests) at once: they share nothing; on a
# clean clone on 2 cores 36 s and 22 s one after the other, 37 s together (measured 2026-11-28).
# Three jobs: compiling, the class archive and Maven side by side once pip is done: set-up 60 and
# 68 s against 65 and 71 s with two jobs and the compiling before the archive (2026-11-30, clean
# clones, interleaved)
test:
	$(MAKE) --no-print-directory -j$(SETUP_JOBS) $(STAMP) storm-tested $(COMPILED) $(ARCHIVE) $(TESTS_COMPILED)
	$(BIN)/python -m pytest

# The test modules as pytest rewrites their asserts, written once beside Maven and the class archive.
# pytest reads a module's rewritten cache even where PYTHONDONTWRITEBYTECODE is set (it then only
# writes none), and this machine sets it: each of the three workers rewrote every test module
# itself, 4-5 CPU s each, at the same moment as the run began (2026-12-01). A collection that fails
# here is left to the test run to report.
TESTS_COMPILED := $(VENV)/.tests-compiled
$(TESTS_COMPILED): $(STAMP) $(shell find tests -name '*.py' 2>/dev/null)
	-env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest --collect-only -q -p no:xdist -p no:cacheprovider \
		-o addopts=--import-mode=importlib >/dev/null 2>&1
	touch $@

storm-tested:
	$(MVN) $(MVN_FLAGS) -f storm/pom.xml package
	touch $(STORM_BUILT)

bench: $(STAMP)
	$(BIN)/python benchmarks/optimal_microbench.py

# Regenerate the constraints (lock) file from the current environment.
lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^-e' > constraints.txt

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis storm/target
