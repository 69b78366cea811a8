# dbarena: the README's two commands are `make demo` and `make test`.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/dbarena/dbarena/internal/cli.Version=$(VERSION)
BIN      := bin/dbarena
export DBARENA_HOME ?= $(HOME)/.local/share/dbarena

.PHONY: all build deps demo-deps test vet demo bench clean k8s-e2e

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

# Every test, against real MariaDB and PostgreSQL started through dbarena's
# own sandbox code. Under CI a missing server fails instead of skipping.
test: deps vet
	$(GO) test -count=1 -timeout 45m ./...
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
