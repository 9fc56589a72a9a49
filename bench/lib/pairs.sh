# Shared by the bench/vs-* scripts (sourced): runs one row as alternating pairs and files
# every figure a run prints into $RESULTS as "ROW/PHASE TOOL VALUE".
#
#   pairs ROW OURS THEIRS   OURS and THEIRS are commands (functions) printing "PHASE VALUE"
#                           lines for one run; one untimed warm-up pair first, then $PAIRS
#                           pairs, the order swapped from pair to pair (A B, B A, ...): on this
#                           machine the second run of a pair was often the faster, whichever
#                           tool made it.
# With CONTROL=1 the reference runs in both seats: the intervals then show the noise floor.

file_run() {  # row tool command...
    local row=$1 tool=$2
    shift 2
    "$@" | while read -r phase value; do echo "$row/$phase $tool $value" >>"$RESULTS"; done
}

pairs() {  # row ours theirs
    local row=$1 ours=$2 theirs=$3 p
    [ "${CONTROL:-0}" = 1 ] && ours=$theirs
    "$ours" >/dev/null && "$theirs" >/dev/null || true
    for p in $(seq 1 "$PAIRS"); do
        if [ $((p % 2)) = 1 ]; then
            file_run "$row" ours "$ours"
            file_run "$row" theirs "$theirs"
        else
            file_run "$row" theirs "$theirs"
            file_run "$row" ours "$ours"
        fi
    done
}
