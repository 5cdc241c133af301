#!/bin/sh
# run-tsan.sh SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER
#
# ThreadSanitizer over the threading tests: configures the project in WORK_DIR/build
# with -DGK_SANITIZE=thread, builds only test-threading, test-foundation and
# test-backend, and runs them (GK_NAN_FILL=1, as ctest runs the others). Exit 0 when
# they pass with no report, 1 on a failure or a ThreadSanitizer report, 77 (skip) when
# the compilers cannot build or run a -fsanitize=thread program here.
set -u
src=$1
work=$2
cc=$3
cxx=$4
targets="test-threading test-foundation test-backend"

mkdir -p "$work"
cat > "$work/probe.cpp" <<'PROBE'
#include <thread>
int main() { int x = 0; std::thread t([&] { x = 1; }); t.join(); return x == 1 ? 0 : 1; }
PROBE
if ! "$cxx" -fsanitize=thread -pthread "$work/probe.cpp" -o "$work/probe" > "$work/probe.log" 2>&1; then
    echo "SKIP: $cxx cannot build with -fsanitize=thread:"
    cat "$work/probe.log"
    exit 77
fi
if ! "$work/probe" > "$work/probe.log" 2>&1; then
    echo "SKIP: a -fsanitize=thread program does not run here (kernel/ASLR?):"
    cat "$work/probe.log"
    exit 77
fi

generator=""
command -v ninja > /dev/null 2>&1 && generator="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$src" -B "$work/build" $generator -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGK_SANITIZE=thread -DGK_BENCH=OFF > "$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$work/build" -j2 --target $targets || exit 1

status=0
for t in $targets; do
    exe=$(find "$work/build/tests" -name "$t" -type f | head -n 1)
    echo "== $t (ThreadSanitizer)"
    if ! GK_QUIET=1 GK_NAN_FILL=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$exe" --gtest_brief=1; then
        echo "$t failed under ThreadSanitizer"
        status=1
    fi
done
exit $status
