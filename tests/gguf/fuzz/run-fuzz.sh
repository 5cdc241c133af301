#!/bin/sh
# run-fuzz.sh SOURCE_DIR WORK_DIR [SECONDS]
#
# Build the libFuzzer target fuzz-gguf with clang in WORK_DIR/build and run it for
# SECONDS (default 30) over the seed corpus (tests/gguf/corpus) and every input that
# ever crashed it (tests/gguf/regressions); new interesting inputs collect in
# WORK_DIR/corpus. Exit 0 when nothing failed, 1 on a failing input (saved under
# WORK_DIR as crash-*: add it to tests/gguf/regressions/ with the fix), 77 (skip)
# when clang with libFuzzer is not installed. Override the compilers with
# GK_FUZZ_CC / GK_FUZZ_CXX.
set -u
src=$1
work=$2
secs=${3:-30}
here=$src/tests/gguf/fuzz
cc=${GK_FUZZ_CC:-clang}
cxx=${GK_FUZZ_CXX:-clang++}

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
cmake --build "$work/build" -j2 || exit 1

"$work/build/fuzz-gguf" "$work/corpus" "$src/tests/gguf/corpus" "$src/tests/gguf/regressions" \
    -dict="$here/gguf.dict" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -artifact_prefix="$work/" -print_final_stats=1
rc=$?
if [ $rc -ne 0 ]; then
    echo "fuzz-gguf failed (exit $rc); the input is saved under $work/ as crash-*, leak-* or timeout-*:"
    echo "copy it into tests/gguf/regressions/ and fix the reader"
    exit 1
fi
echo "fuzz-gguf: no failure in $secs s"
