#!/bin/sh
# Checks the Debian packages the build needs and installs the missing ones.
#   deps.sh [--test|--zoo]   --test: also the packages `make check` needs; --zoo: those
#                            and python3-torch/torchvision (model exports)
# Installs with apt-get when it can (root, or sudo without a password); otherwise, or
# with MNCC_NO_INSTALL=1, it stops and prints the exact command to run.
# MNCC_EXTRA_PKGS adds package names (used by the tests of this script).
set -u
build="libprotobuf-c-dev protobuf-c-compiler libonnx-dev libzstd-dev libcjson-dev"
test="libonnx-testdata python3-onnx python3-numpy flatbuffers-compiler groff-base chromium chromium-driver clang-format"
want="$build ${MNCC_EXTRA_PKGS:-}"
zoo="python3-torch python3-torchvision"
[ "${1:-}" = "--test" ] && want="$want $test"
[ "${1:-}" = "--zoo" ] && want="$want $test $zoo"

missing=""
for p in $want; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = "installed" ] || missing="$missing $p"
done
missing=${missing# }
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends $missing"
if [ "${MNCC_NO_INSTALL:-0}" != 1 ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"
    else sudo="none"
    fi
    if [ "$sudo" != none ]; then
        echo "deps: installing missing packages: $missing" >&2
        if $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
           $sudo env DEBIAN_FRONTEND=noninteractive $cmd >&2; then
            exit 0
        fi
        echo "deps: apt-get failed" >&2
    fi
fi
echo "deps: missing Debian packages: $missing" >&2
echo "deps: run:  sudo apt-get update && sudo $cmd" >&2
exit 1
