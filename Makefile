# hotplay.stacks — developer entry points.  `make demo` and `make test` are the two
# commands of the README; both start from a fresh machine.
PYTHON ?= python3.12
VENV := .venv
BIN := $(VENV)/bin
BUILD := .build
COLLECTIONS := $(BUILD)/collections
DEV_LINK := $(COLLECTIONS)/ansible_collections/hotplay/stacks

.PHONY: venv install demo test test-deps heat-peer unit integration cloud-test bench-cloud bench-small sanity bench fuzz differential stress docs clean

venv: $(BIN)/.installed

$(BIN)/.installed: requirements.txt requirements-dev.txt scripts/venv.sh
	bash scripts/venv.sh $(PYTHON)

# The collection as users install it: built with ansible-galaxy, installed from the tarball.
install: venv
	rm -rf $(BUILD)/dist $(BUILD)/installed
	$(BIN)/ansible-galaxy collection build --force --output-path $(BUILD)/dist . > /dev/null
	$(BIN)/ansible-galaxy collection install --force -p $(BUILD)/installed $(BUILD)/dist/hotplay-stacks-*.tar.gz > /dev/null

demo: install
	bash scripts/demo.sh

# Every phase of the tests, with the Heat engine's and the test cloud's set-up in the
# background meanwhile, and a line per phase (tests, seconds) at the end (scripts/test_all.sh).
test:
	bash scripts/test_all.sh

# The real-OpenStack tests alone: the cloud's packages and venv, the cloud up, the
# tests, the cloud down (scripts/cloud.sh).
cloud-test: install
	bash scripts/cloud.sh test

# The machine's packages the tests need (PostgreSQL, sshd, iproute2), installed
# with apt-get when missing and run as root; otherwise it says what to install.
test-deps:
	bash scripts/test_deps.sh

# The real Heat engine the differential tests compare with, when its peer folder is
# beside the clone (scripts/heat_peer.sh; otherwise they are skipped, in one line).
heat-peer:
	bash scripts/heat_peer.sh install

unit: venv test-deps
	bash scripts/test.sh unit

integration: install test-deps
	bash scripts/test.sh integration

sanity: venv
	bash scripts/sanity.sh

# The documentation site (antsibull-docs, Sphinx) in .build/docs/html, warnings as
# errors; its tools in a venv of their own (.build/docs-venv, docs/requirements.txt).
docs:
	bash scripts/docs.sh

clean:
	rm -rf $(BUILD)

# bench_modules.py runs ansible-playbook against the installed collection.
bench: install test-deps
	bash scripts/test.sh bench

# hotplay against the real Heat engine on the test cloud: a stack of 20 servers, each
# with a port and a volume, created, updated and deleted by both (benchmarks/bench_cloud.py).
bench-cloud: install heat-peer
	bash scripts/cloud.sh bench

# The stacks most people run (one server; one with a volume) and the 20-server one,
# each phase by hotplay, Heat and an ideal openstacksdk client, median of 3, with
# where each one's time went (benchmarks/bench_small.py).
bench-small: install heat-peer
	bash scripts/cloud.sh bench-small

# The long bad-input run: the whole corpus with figures, and fuzzing with
# HOTPLAY_FUZZ_EXAMPLES (default 5000) examples per property (docs/security.md).
fuzz: venv
	bash scripts/fuzz.sh

# The stress campaign of module resources (tests/integration/stress_campaign.py):
# STRESS_RUNS (default 50) runs of 100 module resources on localhost and two SSH
# hosts with CPU hogs beside, on SQLite and PostgreSQL; `make test` runs a short one.
stress: install test-deps
	bash scripts/stress_campaign.sh $(or $(STRESS_RUNS),50)

# The long differential run against the real Heat engine (docs/heat-differences.md):
# HOTPLAY_DIFFERENTIAL_CASES (default 2000) generated cases; figures and divergences
# printed, each divergent case in .build/differential/report.jsonl.
differential: install heat-peer
	bash scripts/test.sh differential
