# The dbarena image for Kubernetes shards (dbarena k8s render): one static
# binary, no cgo (the SQLite store is modernc.org/sqlite, pure Go), on a
# distroless base with CA certificates and a non-root user.
#
#   docker build -t registry.example.org/dbarena:v1 .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/dbarena/dbarena/internal/cli.Version=${VERSION}" \
      -o /dbarena ./cmd/dbarena

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /dbarena /dbarena
ENV DBARENA_HOME=/tmp/dbarena
ENTRYPOINT ["/dbarena"]
