# Shared by bench/store-scale and bench/scale (sourced): building the binary once, and the
# wall time of a command over repetitions as median and spread.

# iosurvey_bin [CARGO FLAGS...]: the binary the bench runs: $IOSURVEY when set (no build),
# else target/release/iosurvey, built here with the flags given (--features mpi, say).
iosurvey_bin() {
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    if [[ -z ${IOSURVEY:-} ]]; then
        (cd "$root" && cargo build --release "$@" >&2)
        echo "$root/target/release/iosurvey"
    else
        echo "$IOSURVEY"
    fi
}

# timed REPS CMD...: runs CMD REPS times (stdout discarded, or appended to the file
# $TIMED_OUT when set; stderr discarded; a failure stops the bench, with its stderr) and prints "MEDIAN MIN MAX PEAK": wall seconds of the runs and the
# largest maximum resident set of any run, MiB (GNU time's: of the command itself, not of
# this shell).
timed() {
    local reps=$1 err t0 t1
    shift
    err=$(mktemp)
    for _ in $(seq 1 "$reps"); do
        # The clock around GNU time, whose own %e counts in hundredths only.
        t0=$(date +%s.%N)
        if ! /usr/bin/time -f '%M' -o "$err.time" "$@" >>"${TIMED_OUT:-/dev/null}" 2>"$err"; then
            echo "$(basename "$0"): failed: $*" >&2
            cat "$err" >&2
            rm -f "$err" "$err.time"
            return 1
        fi
        t1=$(date +%s.%N)
        echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') $(tail -1 "$err.time")"
    done | sort -n | awk '
        { wall[NR] = $1; if ($2 > peak) peak = $2 }
        END {
            median = NR % 2 ? wall[(NR + 1) / 2] : (wall[NR / 2] + wall[NR / 2 + 1]) / 2
            printf "%.3f %.3f %.3f %.1f\n", median, wall[1], wall[NR], peak / 1024
        }'
    local rc=${PIPESTATUS[0]}
    rm -f "$err" "$err.time"
    return "$rc"
}
