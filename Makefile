# dbarena: the README's two commands are `make demo` and `make test`.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/dbarena/dbarena/internal/cli.Version=$(VERSION)
BIN      := bin/dbarena
export DBARENA_HOME ?= $(HOME)/.local/share/dbarena

.PHONY: all build deps demo-deps servers test-servers test vet demo bench clean k8s-e2e

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dbarena

deps:
	@scripts/install-deps test

demo-deps:
	@scripts/install-deps demo

vet:
	$(GO) vet ./...
	$(GO) vet -tags k8se2e ./internal/scaleout/k8s/e2e/
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1; }

# The servers the version tests start (PostgreSQL 10 and 18, MariaDB 10.1
# and 10.2, MySQL 5.5.9) and pgbench 18: scripts/fetch-servers test, ~315 MB,
# about a minute cold, unpacked into a cache outside this module and registered in
# $(DBARENA_HOME)'s server catalogue, which the tests read. Under CI always
# (a missing server then fails its tests); elsewhere only when the cache
# exists (make servers creates it), else one line says the tests skip.
# As root the cache is outside /root: PostgreSQL runs as another user.
SERVERS_CACHE ?= $(if $(filter 0,$(shell id -u)),/var/cache/dbarena-servers,$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/dbarena-servers)
fetch_servers = DBARENA_SERVERS=$(SERVERS_CACHE) MAVEN_REPO_LOCAL=$(SERVERS_CACHE)/.m2 scripts/fetch-servers test

servers:
	@$(fetch_servers)

test-servers:
	@if [ -n "$$CI" ] || [ -d "$(SERVERS_CACHE)" ]; then \
		t0=$$(date +%s); $(fetch_servers); echo "fetch-servers: test servers ready in $$(($$(date +%s) - t0)) s ($(SERVERS_CACHE))"; \
	else \
		echo "fetch-servers: skipped: no server cache $(SERVERS_CACHE) (make servers fetches ~315 MB once; CI=true does): the PostgreSQL 10/18, MariaDB 10.1/10.2 and MySQL 5.5.9 tests skip, pgbench tests use the system's pgbench"; \
	fi

# Every test, against real MariaDB and PostgreSQL started through dbarena's
# own sandbox code. Under CI a missing server fails instead of skipping.
# pgbench 18 (fetched with them) comes first on PATH: the
# pgbench-compatibility tests compare with the newest pgbench.
test: deps vet test-servers
	PATH="$(SERVERS_CACHE)/pgbench-18/bin:$$PATH" $(GO) test -count=1 -timeout 45m ./...
	@if [ -n "$$CI" ]; then scripts/k8s-e2e/run; else scripts/k8s-e2e/run --if-cached; fi

# dbarena k8s against a real control plane (etcd, kube-apiserver,
# kube-controller-manager built once from the Go module proxy into
# ${XDG_CACHE_HOME:-~/.cache}/dbarena-k8s, outside this module).
k8s-e2e:
	@scripts/k8s-e2e/run

demo: demo-deps build
	@scripts/demo

bench: deps build
	@bench/sysbench-compare

clean:
	rm -rf bin
