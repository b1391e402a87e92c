#!/usr/bin/env bash
# Builds and runs Quill's own latency harness (benchmarks/hot_path_latency, rdtsc clock), so its
# figures can sit beside `batch20_t1` and `batch20_t4` of tachylog-bench measured in the same
# session. Quill is C++ and not a Cargo dependency: pass a checkout of it (tested with v12.1.0).
#
#   tachylog-bench/quill_harness.sh ~/src/quill [RUNS]
#
# One change to Quill's file: its back end is pinned to CPU 5, which a machine with fewer CPUs
# does not have; it is pinned to CPU 0 here, where tachylog-bench's `tachylog_spin` row pins
# tachylog's back end. The build goes to target/quill-harness/ and the runs' output to standard
# output (1 and then 4 caller threads per run). Needs cmake and a C++17 compiler.
set -euo pipefail

source_dir=${1:?usage: quill_harness.sh QUILL_CHECKOUT [RUNS]}
runs=${2:-1}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$root/target/quill-harness
rm -rf "$work/src"
mkdir -p "$work"
cp -r "$source_dir" "$work/src"
harness=$work/src/benchmarks/hot_path_latency/quill_hot_path_rdtsc_clock.cpp
grep -q 'cpu_affinity = {5}' "$harness" || {
    echo "quill_harness.sh: $harness does not pin its back end to CPU 5 as v12.1.0 does" >&2
    exit 1
}
sed -i 's/cpu_affinity = {5}/cpu_affinity = {0}/' "$harness"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DQUILL_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$work/build" --target BENCHMARK_quill_hot_path_rdtsc_clock >/dev/null
cd "$work"
for run in $(seq "$runs"); do
    echo "run $run of $runs"
    "$work/build/benchmarks/hot_path_latency/BENCHMARK_quill_hot_path_rdtsc_clock"
    rm -f quill_hot_path_rdtsc_clock.log
done
