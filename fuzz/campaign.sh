#!/usr/bin/env bash
# The long fuzzing campaign: every target (or those named) for SECONDS each (default 300), in
# turn, each from its committed seeds plus what earlier campaigns found (kept under
# fuzz/target/campaign-corpus/, not committed). Prints per target the executions and the
# coverage libFuzzer reports at its end; a crash is saved under fuzz/artifacts/<target>/ and
# makes the script exit non-zero after the other targets have run.
#
#   fuzz/campaign.sh            # 300 s per target
#   fuzz/campaign.sh 60 posix_tz fields_wire
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
seconds=${1:-300}
shift || true
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
cargo +nightly fuzz build || exit 1
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)

logs=target/campaign-logs
mkdir -p "$logs"
failed=()
printf '%-20s %12s %8s %8s %8s  %s\n' target executions seconds cov ft result
for target in "${targets[@]}"; do
    corpus=target/campaign-corpus/$target
    mkdir -p "$corpus"
    cp -n "corpus/$target"/* "$corpus"/ 2>/dev/null
    log=$logs/$target.log
    if cargo +nightly fuzz run "$target" "$corpus" -- -max_total_time="$seconds" \
        -print_final_stats=1 >"$log" 2>&1; then
        result=ok
    else
        result="CRASH (see $log, fuzz/artifacts/$target/)"
        failed+=("$target")
    fi
    # `Done 123456 runs in 60 second(s)`, and the last `cov: N ft: M` status line.
    done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1)
    runs=$(sed -n 's/^Done \([0-9]*\) runs in .*/\1/p' <<<"$done_line")
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' <<<"$done_line")
    status=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$status")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
    printf '%-20s %12s %8s %8s %8s  %s\n' "$target" "${runs:--}" "${secs:--}" "${cov:--}" \
        "${ft:--}" "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "crashed: ${failed[*]}"
    exit 1
fi
