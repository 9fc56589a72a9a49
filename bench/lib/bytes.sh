# Shared by the bench/vs-* scripts (sourced): sizes as the tools read them.

# bytes_of SIZE: the bytes of a size with an optional k/m/g/t suffix (powers of two, as IOR,
# fio and iosurvey read them); fails with a message on anything else.
bytes_of() {
    local n=${1%[kKmMgGtT]} shift=0
    case ${1: -1} in k | K) shift=10 ;; m | M) shift=20 ;; g | G) shift=30 ;; t | T) shift=40 ;; esac
    [[ $n =~ ^[0-9]+$ ]] || { echo "$(basename "$0"): bad size $1" >&2; return 1; }
    echo $((n << shift))
}
