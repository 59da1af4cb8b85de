# gpuops.cluster — one-command setup. A newcomer needs two commands:
#   make demo   bring up the local simulated OpenShift cluster and run playbooks/site.yml on it
#   make test   everything CI runs: unit, sanity, lint, build, integration on a real control plane
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= openshift
GPU_NODES ?= 0
BUILD := .build
COLL := $(BUILD)/ansible_collections/gpuops/cluster
SANITY_ROOT := $(BUILD)/sanity
SANITY_COLL := $(SANITY_ROOT)/ansible_collections/gpuops/cluster
KUBECONFIG_LOCAL := $(CURDIR)/.localcluster/kubeconfig
PYTEST_ARGS ?=
# Integration tests run on this many pytest-xdist workers, each with its own local clusters
# (tests/integration/conftest.py); a test file runs whole, in order, on one worker (--dist loadfile;
# loadgroup is broken with pytest 9.2: xdist 3.8 still sets the removed Item._nodeid). Three on 2 cores: with two, the
# cores were 27 % idle through the integration tests (vmstat 30, the clean clone of 3946934); with three, 8 %, and the
# workers' 319 tests took 27 min 20 s instead of 31 min 45 s (cold clean clones of 3946934 and 9de513a, README, Test
# suite). Each worker starts its own clusters (about 1 GB each).
INTEGRATION_WORKERS ?= 3
# Test files that mostly wait for the cluster's controllers run in a pytest of their own beside the workers, on
# clusters of their own (GPUOPS_LOCALCLUSTER_DIR plus -beside), instead of holding one worker while a core idles: the
# API server chain (kube-apiserver stopped and started again in each state; kube-controller-manager, OLM and the
# builds come back on client-go's reflector backoff) kept the machine 0.58 cores busy over its 15 minutes alone
# (README, Test suite: the named faults, 0.46 cores alone, were tried beside it too and gained nothing measurable).
# INTEGRATION_BESIDE= runs every file on the workers.
INTEGRATION_BESIDE ?= tests/integration/test_faults_apiserver.py
# One scenario, the molecule harness on the preflight state (molecule/default/molecule.yml says why): each role's
# converge, idempotence and zero-write re-run are the integration tests', and are not proven twice (README, Test suite).
MOLECULE_SCENARIOS ?= default
# ENGINE=mitogen runs the demo with Mitogen for Ansible's mitogen_linear strategy (one warm Python,
# no per-task interpreter start and kubernetes client import; see README, Benchmarks).
ENGINE ?= default
ENGINE_ENV = $(if $(filter mitogen,$(ENGINE)),ANSIBLE_STRATEGY=mitogen_linear ANSIBLE_STRATEGY_PLUGINS=$$($(BIN)/python -c 'import ansible_mitogen, os; print(os.path.join(os.path.dirname(ansible_mitogen.__file__), "plugins", "strategy"))'),)
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/$(BUILD)
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help venv binaries cluster-binaries promtool oracle-binaries collection style unit oracles sanity lint build-collection integration molecule check test demo cluster-up cluster-down cluster-status bench clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/' | column -t -s $$'\t'

$(BIN)/.stamp: requirements-dev.txt requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

venv: $(BIN)/.stamp ## create .venv with the pinned tool chain

# The three parts at once (each program under its own lock in the cache, so this and other checkouts never build one
# twice): on a cold cache one downloads modules or links (one core) while another compiles. A failure of one fails
# the target once the others have stopped (make waits for the jobs it started). Each part alone serves the targets
# that need only it (a cold `make demo` builds no containerd or helm).
binaries: ## build (cold, ~tens of minutes) or reuse the cached control-plane binaries, promtool and the oracle programs
	@$(MAKE) --no-print-directory -j3 cluster-binaries promtool oracle-binaries

cluster-binaries: ## build or reuse the control plane alone (etcd, Kubernetes, kwok): what a local cluster runs
	@bash tests/localcluster/build.sh >/dev/null

promtool: ## build or reuse promtool alone (the oracle test of the monitoring role's alerts runs it)
	@bash tests/monitoring/build_promtool.sh >/dev/null

oracle-binaries: ## build or reuse the oracle programs alone (device plugin loader, toolkit installer, containerd, helm)
	@bash tests/oracles/build.sh >/dev/null

collection: venv ## expose this checkout as ansible_collections/gpuops/cluster under .build/
	@mkdir -p $(dir $(COLL))
	@[ -L $(COLL) ] || ln -sfn $(CURDIR) $(COLL)

style: venv ## black --check and ruff (pyflakes, pycodestyle, imports, complexity <= 15)
	$(BIN)/black --check -q plugins tests
	$(BIN)/ruff check -q plugins tests

unit: collection ## unit tests (pure functions, module argument handling)
	$(BIN)/pytest -q tests/unit $(PYTEST_ARGS)

oracles: collection oracle-binaries promtool ## the roles' rendered configs through upstream code (device plugin loader, toolkit installer, containerd, promtool)
	$(BIN)/pytest -q tests/oracles $(PYTEST_ARGS)

sanity: venv ## ansible-test sanity on a clean copy of the tracked tree
	bash tests/sanity/run.sh

lint: venv collection ## ansible-lint (production profile)
	@# ansible-lint puts $$ANSIBLE_HOME/collections before ANSIBLE_COLLECTIONS_PATH: a copy of this
	@# collection left in ~/.ansible by an earlier install would shadow the checkout (seen: a stale copy hid gpu_timeline).
	ANSIBLE_HOME=$(CURDIR)/$(BUILD)/ansible-home $(BIN)/ansible-lint --offline

build-collection: venv ## build the tarball and prove it installs offline and ansible-doc lists it
	bash tests/build_check.sh

integration: collection cluster-binaries ## integration tests on the real local control plane (started and stopped here)
	@# --no-loadscope-reorder: files are sent in the order tests/integration/conftest.py gives them (heaviest
	@# first), not xdist's (most tests first), which left the long one-test site.yml files for last.
	@# The files beside the workers write to a log of their own (reports/integration-beside.log), shown after the
	@# workers' run; either failing fails this target (5: PYTEST_ARGS deselected every test there).
	@mkdir -p reports; log=reports/integration-beside.log; pid=; rc=0; \
	if [ -n "$(INTEGRATION_BESIDE)" ]; then \
	  GPUOPS_LOCALCLUSTER_DIR=$${GPUOPS_LOCALCLUSTER_DIR:-$(CURDIR)/.localcluster}-beside \
	    $(BIN)/pytest -v --durations=10 $(INTEGRATION_BESIDE) $(PYTEST_ARGS) > $$log 2>&1 & pid=$$!; fi; \
	$(BIN)/pytest -v -n $(INTEGRATION_WORKERS) --dist loadfile --no-loadscope-reorder --durations=40 \
	  $(addprefix --ignore=,$(INTEGRATION_BESIDE)) tests/integration $(PYTEST_ARGS) || rc=$$?; \
	if [ -n "$$pid" ]; then \
	  wait $$pid; brc=$$?; echo "======== beside the workers: $(INTEGRATION_BESIDE) (exit $$brc) ========"; cat $$log; \
	  if [ $$brc -ne 0 ] && [ $$brc -ne 5 ] && [ $$rc -eq 0 ]; then rc=$$brc; fi; fi; \
	exit $$rc

molecule: collection cluster-binaries ## molecule scenarios (delegated driver) on the local cluster; stops it if it started it
	@running=$$($(BIN)/python tests/localcluster/cluster.py status | grep -q '"api_ready": true' && echo yes || echo no); \
	rc=0; for s in $(MOLECULE_SCENARIOS); do [ -d molecule/$$s ] || continue; \
	  $(BIN)/molecule test -s $$s || { rc=$$?; break; }; done; \
	if [ $$running = no ]; then $(BIN)/python tests/localcluster/cluster.py down; fi; exit $$rc

check: venv collection ## the inner loop: style, unit tests and ansible-test sanity, two at a time (no cluster, no Go build)
	$(MAKE) --no-print-directory -j2 --output-sync=target style unit sanity

# make test, on a cold cache (README, Test suite):
# 1. the control plane builds next to the checks that need no cluster (venv, style, unit, sanity, lint,
#    build-collection), two jobs at a time (-j2, each target's output kept together by -O);
# 2. the integration tests start as soon as those pass, while the oracle programs (helm, the device plugin's loader,
#    the toolkit installer, four containerds) and then promtool, started at nice 19 with step 1, build on in the
#    cycles the tests leave idle (test_gpu_operator_helm.py builds or waits for helm itself); their log is printed
#    when they are done;
# 3. the oracle tests and molecule.
# A failure stops the run after its step (the oracle build, a process group of its own, is then stopped too, as on
# Ctrl-C or SIGTERM: the EXIT trap; a terminal's Ctrl-C reaches only the foreground process group); the
# exit status is the first failure's. The group comes from `set -m`, not setsid: a new session is a new scheduler
# autogroup (Linux, sched_autogroup_enabled), whose share nice does not lower: in the clean clone of 3946934 they
# were started that way at nice 19 and still finished (608 s) inside the control plane's build (656 s), on cores
# 98 % busy.
test: ## everything CI runs: style, unit, sanity, lint, build-collection next to the control plane's build; then integration (the oracle programs and promtool building beside it), oracles, molecule
	@mkdir -p reports; log=reports/oracle-build.log; \
	set -m; nice -n 19 bash -c 'bash tests/oracles/build.sh && bash tests/monitoring/build_promtool.sh' > $$log 2>&1 & \
	  opid=$$!; set +m; \
	trap 'kill -- -'$$opid' 2>/dev/null' EXIT; \
	rc=0; $(MAKE) --no-print-directory -j2 --output-sync=target cluster-binaries style unit sanity lint \
	  build-collection || rc=$$?; \
	if [ $$rc -eq 0 ]; then $(MAKE) --no-print-directory integration || rc=$$?; fi; \
	[ $$rc -eq 0 ] || kill -- -$$opid 2>/dev/null; \
	wait $$opid; orc=$$?; trap - EXIT; echo "======== the oracle programs and promtool, built beside (exit $$orc) ========"; grep -v '^go: downloading' $$log; \
	if [ $$rc -eq 0 ] && [ $$orc -ne 0 ]; then rc=$$orc; fi; \
	if [ $$rc -eq 0 ]; then $(MAKE) --no-print-directory oracles molecule || rc=$$?; fi; \
	exit $$rc

cluster-up: venv cluster-binaries ## start the local cluster (PROFILE=openshift|kubernetes, GPU_NODES=N), kubectl in .localcluster/bin
	@bash tests/localcluster/build.sh --kubectl >/dev/null
	$(BIN)/python tests/localcluster/cluster.py up --profile $(PROFILE) --gpu-nodes $(GPU_NODES)

cluster-down: ## stop the local cluster; leaves no process behind
	@if [ -x $(BIN)/python ]; then $(BIN)/python tests/localcluster/cluster.py down; else python3 tests/localcluster/cluster.py down; fi

cluster-status: ## what is running
	$(BIN)/python tests/localcluster/cluster.py status

demo: collection ## bring up the simulated OpenShift cluster and run playbooks/site.yml against it (ENGINE=mitogen: faster)
	@case "$(ENGINE)" in default|mitogen) ;; *) echo "ENGINE must be default or mitogen, got '$(ENGINE)'"; exit 2;; esac
	$(MAKE) cluster-up PROFILE=openshift
	K8S_AUTH_KUBECONFIG=$(KUBECONFIG_LOCAL) $(ENGINE_ENV) $(BIN)/ansible-playbook -i inventories/local playbooks/site.yml
	@echo "The cluster is still up: KUBECONFIG=$(KUBECONFIG_LOCAL) ; 'make cluster-down' stops it."

bench: collection cluster-binaries ## benchmark scripts (figures printed, not asserted)
	@for b in tests/bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean: cluster-down ## remove build outputs (not the binary cache in ~/.cache/gpuops-localcluster)
	rm -rf $(BUILD) tests/output
