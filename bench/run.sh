#!/usr/bin/env bash
# Compile-time benchmark: bash bench/run.sh   (from the repo root)
#
# Generates, into build/bench/ (files that already exist are kept), convnet and
# transformer graphs of 10k and 100k nodes with bench/gen_graph.py, compiles each
# with /usr/bin/time -v, and prints model, nodes, wall seconds, peak RSS and exit
# code.  Per-model compiler output goes to build/bench/NAME.log.
#
# Environment:
#   MNCC    the compiler, default build/mncc; run as: $MNCC MODEL -o build/bench/out_NAME
#           If MNCC contains the word MODEL it is a shell command template instead:
#           MODEL and OUT are replaced and the result runs under sh -c, e.g.
#           MNCC='/bin/cat MODEL > /dev/null' bash bench/run.sh
#   PYTHON  default /usr/bin/python3
#   SIZES   node counts, default "10000 100000"
#   KINDS   default "convnet transformer"
set -u

MNCC=${MNCC:-build/mncc}
PYTHON=${PYTHON:-/usr/bin/python3}
SIZES=${SIZES:-10000 100000}
KINDS=${KINDS:-convnet transformer}
DIR=build/bench
TIME=/usr/bin/time

cd "$(dirname "$0")/.." || exit 1
mkdir -p "$DIR" || exit 1

if [ ! -x "$TIME" ]; then
    echo "bench: $TIME not found (Debian package 'time')" >&2
    exit 1
fi
case $MNCC in
*MODEL*) ;;
*)
    read -r -a mncc_cmd <<<"$MNCC"
    if ! command -v "${mncc_cmd[0]}" >/dev/null 2>&1; then
        echo "bench: compiler '${mncc_cmd[0]}' not found; build it first (make) or set MNCC" >&2
        exit 1
    fi
    ;;
esac

label() { # 10000 -> 10k, 100000 -> 100k, 1500 -> 1500
    if [ $(($1 % 1000)) -eq 0 ]; then echo "$(($1 / 1000))k"; else echo "$1"; fi
}

# generate
for kind in $KINDS; do
    for n in $SIZES; do
        f=$DIR/${kind}_$(label "$n").onnx
        [ -s "$f" ] && continue
        echo "bench: generating $f" >&2
        if ! "$PYTHON" bench/gen_graph.py "$kind" "$n" "$f.tmp"; then
            rm -f "$f.tmp"
            echo "bench: generating $f failed" >&2
            exit 1
        fi
        mv "$f.tmp" "$f"
    done
done

# run
status=0
rows=()
for kind in $KINDS; do
    for n in $SIZES; do
        name=${kind}_$(label "$n")
        model=$DIR/$name.onnx
        out=$DIR/out_$name
        tv=$DIR/$name.time
        log=$DIR/$name.log
        echo "bench: compiling $model" >&2
        case $MNCC in
        *MODEL*)
            cmd=${MNCC//MODEL/$model}
            cmd=${cmd//OUT/$out}
            "$TIME" -v -o "$tv" sh -c "$cmd" >"$log" 2>&1
            ;;
        *)
            "$TIME" -v -o "$tv" "${mncc_cmd[@]}" "$model" -o "$out" >"$log" 2>&1
            ;;
        esac
        rc=$?
        # /usr/bin/time -v: "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.03"
        wall=$(sed -n 's/.*Elapsed (wall clock) time.*: \([0-9:.]*\)$/\1/p' "$tv" |
            awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
        rss=$(awk -F: '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tv")
        # the exit code as time reports it (a signal shows as "Command terminated by signal N")
        code=$(awk -F': ' '/Exit status/ { print $2 }' "$tv")
        sig=$(sed -n 's/.*Command terminated by signal \([0-9]*\).*/\1/p' "$tv")
        [ -n "$sig" ] && code="sig$sig"
        [ -z "$code" ] && code=$rc
        [ "$rc" -ne 0 ] && status=1
        rows+=("$(printf '%-18s %8s %10s %13s %6s' "$name" "$n" "${wall:-?}" "${rss:-?}" "$code")")
    done
done

printf '%-18s %8s %10s %13s %6s\n' model nodes wall_s peak_rss_MiB exit
for r in "${rows[@]}"; do printf '%s\n' "$r"; done
exit $status
