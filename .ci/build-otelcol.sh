#!/usr/bin/env bash
# Builds the OpenTelemetry Collector the OTLP tests send to (`tests/otlp_reaches_a_real_collector.rs`):
# the OTLP receiver, the debug exporter and the OTLP/HTTP exporter, nothing else, with the
# collector builder (ocb). Everything goes under one directory, by default `target/otelcol`
# (or `$CARGO_TARGET_DIR/otelcol`): the binary `otelcol`, the builder, and Go's module and build
# caches, so a second run, or a CI run on a machine that kept `target/`, costs nothing.
# Needs the Go toolchain (`go` on PATH or in /usr/local/go/bin) and the Go module proxy.
# Prints the binary's path as its last line.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
version=0.165.0
out=${1:-${CARGO_TARGET_DIR:-$(pwd)/target}/otelcol}
mkdir -p "$out"
out=$(cd "$out" && pwd)
binary=$out/otelcol
stamp=$out/otelcol.version

if [ -x "$binary" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
    echo "$binary"
    exit 0
fi

go=$(command -v go || true)
[ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; } || true
if [ -z "$go" ]; then
    echo "build-otelcol: no Go toolchain (go on PATH or /usr/local/go/bin/go); install Go 1.24 or later" >&2
    exit 1
fi
"$go" version >&2

# Go's caches live beside the binary; GOTOOLCHAIN=local: use this Go, never download another.
export GOPATH=$out/gopath GOMODCACHE=$out/gopath/pkg/mod GOCACHE=$out/gocache
export GOBIN=$out/bin GOTOOLCHAIN=local GOFLAGS=-modcacherw CGO_ENABLED=0
export PATH="$(dirname "$go"):$PATH"

if [ ! -x "$GOBIN/builder" ]; then
    echo "build-otelcol: installing the collector builder v$version" >&2
    "$go" install "go.opentelemetry.io/collector/cmd/builder@v$version" </dev/null >&2
fi

cat >"$out/manifest.yaml" <<MANIFEST
dist:
  name: otelcol
  description: OpenTelemetry Collector for tachylog's OTLP tests
  output_path: $out/build
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v$version
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v$version
  - gomod: go.opentelemetry.io/collector/exporter/otlphttpexporter v$version
MANIFEST

echo "build-otelcol: building the collector v$version (a few minutes on 2 cores)" >&2
"$GOBIN/builder" --config "$out/manifest.yaml" </dev/null >&2
install -m 755 "$out/build/otelcol" "$binary"
echo "$version" >"$stamp"
echo "$binary"
