# Muster's build, code generation, tests and local fleet. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO              ?= go
# Every build here is static, as the images need (muster-hub, muster-agent, the toolchain):
# one setting for the binaries, the test binaries and the tools, so that they share one
# build cache. With cgo on wherever a C compiler is found, the suites' hub and agent and
# the tests' copies of the same packages were compiled twice (on a cold machine, minutes).
CGO_ENABLED     ?= 0
export CGO_ENABLED
# The go command stamps builds with `git status`, which refreshes .git/index when it can
# take the lock. make test builds beside verify-generated-copy, which tars .git: a refresh
# in the middle of it made tar fail ("file changed as we read it"). Read-only git here.
export GIT_OPTIONAL_LOCKS := 0
CONTROLLER_GEN  ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
GOLANGCI_LINT   ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.6.2
# crdgen is controller-gen's CRD generator with documented template metadata (hack/crdgen);
# it stamps the CRDs with the controller-tools version its go.mod pins.
CRDGEN_LDFLAGS  := -X sigs.k8s.io/controller-tools/pkg/version.version=$$($(GO) list -C hack/crdgen -m -f '{{.Version}}' sigs.k8s.io/controller-tools)
VERSION         ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS         := -X github.com/musterhq/muster/cmd/musterctl/app.version=$(VERSION) -X github.com/musterhq/muster/internal/version.version=$(VERSION)
BIN_DIR         ?= $(CURDIR)/bin
FLEET_DIR       ?= $(CURDIR)/_output/fleet
FLEET_MEMBERS   ?= 2
FLEET_NODES     ?= 3
# Integration tests start kube-apiservers; the e2e suites start whole fleets, one suite at
# a time (-p 1): two fleets starting at once on two cores race for CPU and for the random
# ports kwokctl picks.
TEST_TIMEOUT    ?= 15m
# Each fuzz target runs this many inputs in `make test` (go test -fuzz takes one target a
# run). A count, not a duration: with a duration Go's fuzzing engine fails ("context
# deadline exceeded") when the deadline comes before its workers have replayed the cached
# corpus, which a loaded two-core machine reaches. A target written package:Name@count runs
# count inputs instead: the inventory's each load a fleet and ask 12 queries of it.
FUZZ_TIME       ?= 20000x
FUZZ_TARGETS    := \
	./api/indexset:FuzzIndexes ./agent/job:FuzzIndexedRound \
	./api/identity:FuzzDecide ./api/identity:FuzzParseAgentCSR \
	./api/podsecurity:FuzzMemberLabelsOfSetsOnlyPodSecurityLabels@5000x ./api/templates:FuzzErrors ./api/work:FuzzValidate ./api/workloadspread:FuzzValidateAndInject \
	./api/cronjob:FuzzSchedule ./internal/fairqueue:FuzzQueueIsFairAndLosesNothing@5000x ./hub/inventory:FuzzEligibleNodesAnswerAsTheScan@2000x \
	./hub/webhook:FuzzFleetJobValidator@5000x ./hub/webhook:FuzzBroadcastJobValidator@5000x \
	./hub/webhook:FuzzFleetCronJobValidator@5000x ./hub/webhook:FuzzWorkValidator \
	./hub/webhook:FuzzWorkloadSpreadValidator@5000x \
	./placement/division:FuzzSplit ./placement/parallelism:FuzzDivide ./placement/subsets:FuzzRebalance
E2E_TIMEOUT     ?= 30m
E2E_BIN_DIR     ?= $(CURDIR)/_output/e2e-bin
E2E_TEST_BIN_DIR ?= $(CURDIR)/_output/e2e-test-bin
# The local fleet's binaries (e2e suites, make demo) are built with the e2e tag, as the
# suites are: there a FleetCronJob schedule may begin with a seconds field, so the suites
# wait seconds for a slot (api/cronjob). framework.BuildTags says the same; the kind
# suites' images are built without it.
E2E_BUILD_TAGS  := e2e
E2E_KIND_TIMEOUT ?= 45m
BENCH_JOB_ARGS  ?= -runs 3
BENCH_SCALE_CRONS ?= 5000 500

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

# CRD descriptions are kept whole (no maxDescLen): `kubectl explain` shows every field's
# documentation, the embedded Job and pod specs' included. The largest CRD (FleetCronJob,
# two pod templates) stores about 650 KB, under half of etcd's 1.5 MiB request limit
# (api/v1alpha1 TestCRDSizes keeps it so); it needs server-side apply, which musterctl uses.
# hack/crdgen is controller-gen's CRD generator plus descriptions for the metadata of
# embedded templates, which controller-gen leaves undocumented.
.PHONY: generate
generate: ## Regenerate deepcopy, CRDs (deploy/crd, and into the charts) and RBAC (the charts' templates/rbac) from the Go markers.
	$(CONTROLLER_GEN) object paths=./api/...
	rm -rf deploy/crd
	$(GO) build -C hack/crdgen -ldflags "$(CRDGEN_LDFLAGS)" -o $(BIN_DIR)/crdgen .
	$(BIN_DIR)/crdgen deploy/crd ./api/...
	$(CONTROLLER_GEN) rbac:roleName=muster-hub paths=./hub/... output:rbac:artifacts:config=deploy/charts/muster-hub/templates/rbac
	$(CONTROLLER_GEN) rbac:roleName=muster-agent paths=./agent/... output:rbac:artifacts:config=deploy/charts/muster-agent/templates/rbac
	$(GO) run ./hack/chartcrds deploy/charts/muster-hub deploy/crd/*.yaml
	$(GO) run ./hack/chartcrds deploy/charts/muster-agent deploy/crd/muster.dev_broadcastjobs.yaml

.PHONY: verify
verify: verify-generated lint ## Check formatting, lint (go vet's checks included), go.mod tidiness and that generated files are up to date.

.PHONY: verify-generated
verify-generated: generate charts ## verify without lint: formatting, go.mod tidiness, generated files up to date, the Helm charts linted.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -C hack/crdgen ./...
	$(GO) test -count=1 -run TestCheckedInManifest ./hack/krew/
	$(GO) mod tidy
	@if [ -n "$$(git status --porcelain -- api deploy go.mod go.sum)" ]; then \
		echo "generated files or go.mod drifted; run 'make generate' and 'go mod tidy' and commit:"; \
		git status --porcelain -- api deploy go.mod go.sum; git diff --stat -- api deploy go.mod go.sum; exit 1; fi

# Helm is the module's pinned tool (go.mod's tool line): helm lint --strict checks each
# chart with its defaults and with every value set, and helm template renders it as an
# install would. The join values are an example line (no hub is contacted).
HELM            ?= $(GO) tool helm
AGENT_JOIN      := --set clusterName=member1,hub.url=https://hub.example:6443,bootstrap.token=abcdef.0123456789abcdef \
	--set hub.caHash=sha256:0000000000000000000000000000000000000000000000000000000000000000
CHART_ALL       := --set extraArgs={--zap-log-level=2},crds.keep=false,namespace.create=false,nodeSelector.disk=ssd,tolerations[0].operator=Exists \
	--set image.digest=sha256:0000000000000000000000000000000000000000000000000000000000000000
.PHONY: charts
charts: ## helm lint and helm template the charts in deploy/charts.
	$(HELM) lint --strict deploy/charts/muster-hub
	$(HELM) lint --strict deploy/charts/muster-hub $(CHART_ALL) --set replicas=3,podSecurity.defaultLevel=restricted
	$(HELM) lint --strict deploy/charts/muster-agent
	$(HELM) lint --strict deploy/charts/muster-agent $(AGENT_JOIN) $(CHART_ALL) --set workExecutorRoles={cluster-admin}
	$(HELM) template muster-hub deploy/charts/muster-hub >/dev/null
	$(HELM) template muster-agent deploy/charts/muster-agent $(AGENT_JOIN) >/dev/null

# verify-generated-copy runs verify-generated on a copy of the working tree (with its .git,
# so that the drift check sees what git sees here), for make test to run it beside fleets
# that read deploy/crd while make generate rewrites it. A git command beside it may create
# and remove a lock file in .git while tar reads it (tar's exit status 1, "file changed as
# we read it"); git replaces its files by rename, so each file copied is whole, and only a
# fatal tar error (2) fails the copy.
VERIFY_TREE ?= $(CURDIR)/_output/verify-tree
.PHONY: verify-generated-copy
verify-generated-copy: ## verify-generated on a copy of the working tree in VERIFY_TREE: the tree itself is never written.
	rm -rf $(VERIFY_TREE) && mkdir -p $(VERIFY_TREE)
	{ tar -C $(CURDIR) --exclude=./_output --exclude=./bin --warning=no-file-changed -cf - . || [ $$? = 1 ]; } | tar -C $(VERIFY_TREE) -xf -
	$(MAKE) --no-print-directory -C $(VERIFY_TREE) verify-generated

.PHONY: lint
lint: ## golangci-lint with .golangci.yml (the default set with go vet's checks, errorlint, funlen 80, gocyclo, unparam) on every package and build tag.
	$(GOLANGCI_LINT) run --allow-serial-runners ./...

.PHONY: build
build: ## Build muster-hub, muster-agent and musterctl (and its kubectl plugin name kubectl-muster) into bin/.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/ ./cmd/...
	ln -sf musterctl $(BIN_DIR)/kubectl-muster

# The archives are reproducible (hack/krew): the same tree and Go toolchain give the same
# sha256s. verify checks the checked-in manifest without building (hack/krew's test).
.PHONY: krew-manifest
krew-manifest: ## Build musterctl's release archives (linux, darwin × amd64, arm64) into _output/dist and write deploy/krew/muster.yaml for hack/krew/version.
	$(GO) run ./hack/krew -dist $(CURDIR)/_output/dist -out deploy/krew/muster.yaml

.PHONY: toolchain
toolchain: ## Build (once) and cache kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and kwok.
	$(GO) run ./e2e/cmd/toolchain >/dev/null

##@ Tests

# The fleets wait on clocks, leases and processes far more than they compute: the fleetjob
# suite, measured, used 134 CPU-seconds of two cores in 222 s (30 %). So `make test` runs
# the compile of every suite's test binary (go test -p 1 otherwise links each, some 15 s,
# just before running it: the later suites now start from the build cache), lint, the
# unit tests and fuzzing, and the build of the kind node image, beside the local e2e
# suites, at low CPU priority (BESIDE, below, and the lowest best-effort disk priority):
# they take mostly the CPU the fleets leave idle, so a fleet's leases and heartbeats keep
# their timing. The kind suites start once the local ones and the node
# image are done. Output of the jobs beside waits in CHECKS_LOG and NODE_IMAGE_LOG and is
# printed after the suites; a failure anywhere fails the target. The engine starts in the
# foreground, before them: a dockerd started at low priority would pass it to every kind
# node. make generate, which rewrites deploy/crd that the fleets read, runs on a copy.
CHECKS_LOG      ?= $(CURDIR)/_output/checks.log
NODE_IMAGE_LOG  ?= $(CURDIR)/_output/node-image.log
TOOLCHAIN_LOG   ?= $(CURDIR)/_output/toolchain.log
# The jobs beside the suites get a session of their own whose autogroup runs at nice 10:
# with the kernel's autogroups on (Debian's default), a process's own nice ranks it only
# within its session, and kwokctl starts each control-plane process in a session of its
# own, so a plain nice 19 job got as much CPU as any one of them (the suites ran 10-40 %
# slower beside it than alone). At nice 10 the group weighs a tenth of one control-plane
# process, yet its envtest API servers still get a share while a fleet starts, where nice
# 19 would leave them next to none. setsid -w keeps the job's exit status; a kernel
# without autogroups ignores the write.
# What make test runs beside the suites, in this order (make -k: one failing does not stop
# the next).
CHECKS          := verify-generated-copy e2e-test-binaries lint test-unit fuzz
BESIDE          := setsid -w sh -c 'echo 10 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 ionice -c 2 -n 7 "$$0" "$$@"' $(MAKE) --no-print-directory

# On a cold machine the toolchain's compile (some 17 minutes on two cores) comes before
# any suite can start. So it starts first, at normal priority, and what does not need it
# goes on meanwhile: the engine and Chromium from Debian (network and disk, not CPU),
# then the jobs beside the suites, whose checks and compiles take what CPU the
# toolchain's module downloads and links leave, and whose node image build fetches its
# Debian rootfs before it waits for the toolchain's lock. verify-generated runs beside
# too, on a copy of the tree (verify-generated-copy), so that make generate's rewrites
# never reach the files the fleets read. Warm, the toolchain is found cached in a second.
.PHONY: test
test: ## Everything CI runs: verify, the e2e suites, then the kind suites; lint, unit and integration tests, fuzzing and the node image build beside them.
	@mkdir -p $(dir $(CHECKS_LOG)) $(dir $(NODE_IMAGE_LOG)) $(dir $(TOOLCHAIN_LOG)); \
	cpu() { t=$$(mktemp); times >$$t; read -r u s <<<"$$(tail -1 $$t)"; rm -f $$t; cpu="CPU $$u user, $$s system"; }; \
	job() { label=$$1 log=$$2; shift 2; start=$$(date +%s); rc=0; "$$@" >$$log 2>&1 || rc=$$?; \
	  cpu; echo "make $$label took $$(( $$(date +%s) - start ))s, $$cpu" >>$$log; return $$rc; }; \
	job toolchain $(TOOLCHAIN_LOG) $(MAKE) --no-print-directory toolchain & toolchain=$$!; \
	checks=; image=; trap 'kill $$toolchain $$checks $$image 2>/dev/null || true' EXIT; \
	echo "$$(date +%T) make toolchain starts; its output follows make engine chromium"; \
	prep=0; $(MAKE) --no-print-directory engine chromium || prep=$$?; \
	echo "$$(date +%T) make $(CHECKS) and make kind-node-image start beside the suites at low priority; their output follows them"; \
	job "$(CHECKS)" $(CHECKS_LOG) $(BESIDE) -k $(CHECKS) & checks=$$!; \
	job kind-node-image $(NODE_IMAGE_LOG) $(BESIDE) kind-node-image & image=$$!; \
	tcrc=0; wait $$toolchain || tcrc=$$?; \
	echo "----- make toolchain -----"; cat $(TOOLCHAIN_LOG); \
	suites=$$prep; [ $$tcrc = 0 ] || suites=$$tcrc; \
	if [ $$suites = 0 ]; then $(MAKE) --no-print-directory e2e || suites=$$?; fi; \
	imagerc=0; wait $$image || imagerc=$$?; \
	echo "----- make kind-node-image (ran beside the suites) -----"; cat $(NODE_IMAGE_LOG); \
	if [ $$suites = 0 ] && [ $$imagerc = 0 ]; then $(MAKE) --no-print-directory e2e-kind || suites=$$?; fi; \
	echo "$$(date +%T) suites done; waiting for make $(CHECKS)"; \
	checksrc=0; wait $$checks || checksrc=$$?; \
	echo "----- make $(CHECKS) (ran beside the suites) -----"; cat $(CHECKS_LOG); \
	echo "$$(date +%T) engine, toolchain and suites exit $$suites, node image exit $$imagerc, $(CHECKS) exit $$checksrc"; \
	cpu; echo "make test, every step above: $$cpu (the commands it waited for; the fleets' control planes and containers run detached and are not in it)"; \
	[ $$suites = 0 ] && [ $$imagerc = 0 ] && [ $$checksrc = 0 ]

.PHONY: engine
engine: ## Ready the container engine for the kind suites (installs Debian's docker.io and starts dockerd when none answers).
	$(GO) run ./e2e/cmd/kind-node-image -engine-only

.PHONY: chromium
chromium: ## Install Debian's Chromium (as root, once) for the dashboard's browser test.
	@command -v chromium >/dev/null || [ -n "$$MUSTER_CHROMIUM" ] || { \
		if [ "$$(id -u)" != 0 ]; then echo "the dashboard's browser test needs Chromium: apt-get install chromium, or set MUSTER_CHROMIUM"; exit 1; fi; \
		echo "installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

.PHONY: test-unit
test-unit: toolchain chromium ## Unit and integration (envtest) tests.
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

.PHONY: fuzz
fuzz: ## Fuzz every target in FUZZ_TARGETS, FUZZ_TIME inputs each (or its @count): no panic, no hang, bounded allocation.
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; count=$(FUZZ_TIME); \
		case $$name in *@*) count=$${name#*@}; name=$${name%@*};; esac; \
		echo "fuzz $$name ($$pkg) for $$count"; \
		$(GO) test -count=1 -run '^$$' -fuzz "^$$name$$" -fuzztime $$count "$$pkg" | grep -v '^fuzz: elapsed' || exit 1; \
	done

# The fault-injection suite (hub/robustness) runs seeds 1-6 in make test; chaos runs as
# many as CHAOS_SEEDS from CHAOS_FIRST. A failing seed prints the line that replays it.
CHAOS_SEEDS     ?= 100
CHAOS_FIRST     ?= 1
.PHONY: chaos
chaos: toolchain ## The hub's FleetJob controller under seeded faults (failed and lost writes, a lagging cache, restarts, members removed), CHAOS_SEEDS seeds from CHAOS_FIRST.
	$(GO) test -count=1 -timeout 0 -run TestFleetJobsRunEachIndexOnceUnderFaults ./hub/robustness/ -robustness.first=$(CHAOS_FIRST) -robustness.seeds=$(CHAOS_SEEDS)

.PHONY: e2e-bin
e2e-bin: ## muster-hub, muster-agent, musterctl and helm in E2E_BIN_DIR, built once for every e2e and kind suite (framework.BinDirEnv).
	rm -rf $(E2E_BIN_DIR) && mkdir -p $(E2E_BIN_DIR)
	CGO_ENABLED=0 $(GO) build -tags $(E2E_BUILD_TAGS) -o $(E2E_BIN_DIR)/ ./cmd/muster-hub ./cmd/muster-agent ./cmd/musterctl helm.sh/helm/v4/cmd/helm

.PHONY: e2e
e2e: toolchain chromium e2e-bin ## End-to-end suites on a fleet (MUSTER_E2E_PROVIDER=local|kind).
	@# -vet=off: make verify's golangci-lint already ran go vet's checks with the e2e tags.
	MUSTER_E2E_BIN_DIR=$(E2E_BIN_DIR) $(GO) test -count=1 -p 1 -vet=off -tags $(E2E_BUILD_TAGS) -timeout $(E2E_TIMEOUT) -v ./e2e/...

.PHONY: e2e-test-binaries
e2e-test-binaries: ## Compile, without running, the test binary of every e2e and kind suite (into E2E_TEST_BIN_DIR), so that go test finds them in the build cache.
	$(GO) test -c -o $(E2E_TEST_BIN_DIR)/local/ -tags $(E2E_BUILD_TAGS) ./e2e/...
	$(GO) test -c -o $(E2E_TEST_BIN_DIR)/kind/ -tags e2ekind ./e2e/kindfleet/

.PHONY: e2e-kind
e2e-kind: toolchain e2e-bin ## Kind suites: a Docker engine (started here if none runs), the node image built here, real clusters and pods.
	MUSTER_E2E_BIN_DIR=$(E2E_BIN_DIR) $(GO) test -count=1 -p 1 -vet=off -tags e2ekind -timeout $(E2E_KIND_TIMEOUT) -v ./e2e/kindfleet/

.PHONY: kind-node-image
kind-node-image: ## Build (once) the kind node image from the module proxy and Debian packages; prints its name.
	$(GO) run ./e2e/cmd/kind-node-image

.PHONY: bench
bench: ## Go benchmarks of placement, the hub inventory and the agent's Job round.
	$(GO) test -run '^$$' -bench . -benchmem ./placement/... ./hub/inventory/ ./agent/job/ | awk "$$INVENTORY_LINE"

# INVENTORY_LINE passes go test's output through and ends it with the inventory's figures
# at 100k nodes: a template asked again (as reconciles do), asked for the first time (cold),
# and a selective one cold; wall and CPU milliseconds (CPU discounts other processes' turns);
# and the heap the inventory holds per node.
define INVENTORY_LINE
{ print }
function metric(unit,  i) { for (i = 2; i < NF; i++) if ($$(i + 1) == unit) return $$i }
/^BenchmarkEligibleNodesOver100kNodes/ { warm = metric("ms/query"); warmCPU = metric("cpu-ms/query") }
/^BenchmarkEligibleNodesColdOver100kNodes/ { cold = metric("ms/query"); coldCPU = metric("cpu-ms/query") }
/^BenchmarkEligibleNodesSelectiveColdOver100kNodes/ { selective = metric("ms/query") }
/^BenchmarkLoad100kNodes/ { perNode = metric("heap-B/node") }
END { printf "inventory eligible-nodes-100k ms/query=%s cpu-ms/query=%s cold-ms/query=%s cold-cpu-ms/query=%s selective-cold-ms/query=%s B/node=%s\n", warm, warmCPU, cold, coldCPU, selective, perNode }
endef
export INVENTORY_LINE

.PHONY: bench-broadcastjob
bench-broadcastjob: toolchain ## Fleet benchmark: BroadcastJob on 1 member × 1000 nodes by the agent and by OpenKruise (scheduler, nodeName) in turns (BENCH_BROADCASTJOB_ARGS, default -runs 3), medians and ratios; then 3 members × 500 from the hub.
	$(GO) run ./e2e/cmd/bench-broadcastjob $(BENCH_BROADCASTJOB_ARGS)

.PHONY: bench-job
bench-job: toolchain ## Fleet benchmark: a 1000-completion Job by kube-controller-manager and by the agent in turns (BENCH_JOB_ARGS, default -runs 3), medians and ratios.
	$(GO) run ./e2e/cmd/bench-job $(BENCH_JOB_ARGS)

.PHONY: bench-cronjob
bench-cronjob: toolchain ## Fleet benchmark: 500 FleetCronJobs and 500 CronJobs on one slot in turns (BENCH_CRONJOB_ARGS, default -runs 3 -slots 1), medians and ratios.
	$(GO) run ./e2e/cmd/bench-cronjob $(BENCH_CRONJOB_ARGS)

.PHONY: bench-fairness
bench-fairness: toolchain ## Benchmark: one hub namespace creates 500 FleetJobs, another one; the second's time to Scheduled with the hub's per-namespace queue and controller-runtime's default, medians and ratio.
	$(GO) run ./e2e/cmd/bench-fairness $(BENCH_FAIRNESS_ARGS)

.PHONY: bench-scale
bench-scale: toolchain ## Scale harness: one hub against simulated members (e2e/fleetsim) that join, renew, report nodes, answer Works and restart at once, then one real agent over 5,000 kwok nodes; then the crons, 5,000 and 500 on one slot against kube-controller-manager; a `scale` line per scenario (BENCH_SCALE_ARGS, default -members 1000 -nodes 1000; -scenarios picks some; BENCH_SCALE_CRONS, default "5000 500", empty for none).
	status=0; $(GO) run ./e2e/cmd/bench-scale $(BENCH_SCALE_ARGS) || status=1; \
	for n in $(BENCH_SCALE_CRONS); do $(GO) run ./e2e/cmd/bench-cronjob -crons $$n -runs $$(( n > 1000 ? 1 : 3 )) -phases=false || status=1; done; \
	exit $$status

.PHONY: bench-work
bench-work: toolchain ## Fleet benchmark: 200 Works over 2 members, P50/P99 to the member and back.
	$(GO) test -tags e2e -run '^$$' -bench BenchmarkWorkDelivery -benchtime 3x -timeout 10m -v ./e2e/work/ | grep -E 'round|Benchmark|ok|FAIL'

##@ Local fleet

.PHONY: fleet-up
fleet-up: toolchain ## Start a hub and members (FLEET_MEMBERS, FLEET_NODES); kubeconfigs in _output/fleet/kubeconfig.
	$(GO) run ./e2e/cmd/fleet up --dir $(FLEET_DIR) --members $(FLEET_MEMBERS) --nodes $(FLEET_NODES)

.PHONY: fleet-down
fleet-down: ## Stop the local fleet (and the demo's hub and agents) and remove its state.
	$(GO) run ./e2e/cmd/fleet down --dir $(FLEET_DIR)

.PHONY: demo
demo: toolchain ## A fresh local fleet: hub + members joined with musterctl, a sample Job completing in each.
	$(GO) run ./e2e/cmd/demo --dir $(FLEET_DIR) --members $(FLEET_MEMBERS) --nodes $(FLEET_NODES)
