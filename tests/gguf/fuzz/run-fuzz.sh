#!/bin/sh
# run-fuzz.sh SOURCE_DIR WORK_DIR [SECONDS [FUZZ_DIR TARGET SEED_DIR...]]
#
# Build the libFuzzer target TARGET (default fuzz-gguf) of the CMake project FUZZ_DIR
# (default SOURCE_DIR/tests/gguf/fuzz) with clang in WORK_DIR/build and run it for
# SECONDS (default 30) over the SEED_DIRs (default: tests/gguf/corpus and
# tests/gguf/regressions, every input that ever crashed it), with FUZZ_DIR/*.dict as
# its dictionary when there is one; new interesting inputs collect in WORK_DIR/corpus.
# Exit 0 when nothing failed, 1 on a failing input (saved under WORK_DIR as crash-*:
# add it to the target's regressions folder with the fix), 77 (skip) when clang with
# libFuzzer is not installed. Override the compilers with GK_FUZZ_CC / GK_FUZZ_CXX, the
# largest input (16384 bytes) with GK_FUZZ_MAX_LEN (seeds past it are cut to it).
set -u
src=$1
work=$2
secs=${3:-30}
if [ $# -ge 5 ]; then
    here=$4
    target=$5
    shift 5
    seeds="$*"
else
    here=$src/tests/gguf/fuzz
    target=fuzz-gguf
    seeds="$src/tests/gguf/corpus $src/tests/gguf/regressions"
fi
cc=${GK_FUZZ_CC:-clang}
cxx=${GK_FUZZ_CXX:-clang++}
max_len=${GK_FUZZ_MAX_LEN:-16384}

if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: $cxx/$cc not found (install clang for the fuzz test)"
    exit 77
fi
mkdir -p "$work/corpus"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' > "$work/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer "$work/probe.cpp" -o "$work/probe" 2> "$work/probe.log"; then
    echo "SKIP: $cxx cannot link -fsanitize=fuzzer (libFuzzer missing):"
    cat "$work/probe.log"
    exit 77
fi

cmake -S "$here" -B "$work/build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
      -DGK_SOURCE_DIR="$src" > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 --target "$target" || exit 1

dict=""
for d in "$here"/*.dict; do
    [ -f "$d" ] && dict="-dict=$d" && break
done
# shellcheck disable=SC2086 # the seed folders and the dictionary option split on purpose
"$work/build/$target" "$work/corpus" $seeds $dict -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -max_len="$max_len" -artifact_prefix="$work/" -print_final_stats=1
rc=$?
if [ $rc -ne 0 ]; then
    echo "$target failed (exit $rc); the input is saved under $work/ as crash-*, leak-* or timeout-*:"
    echo "copy it into the target's regressions folder and fix the code"
    exit 1
fi
echo "$target: no failure in $secs s"
