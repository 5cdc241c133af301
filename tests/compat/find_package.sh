#!/bin/sh
# find_package.sh CMAKE BUILD_DIR CONSUMER_SRC WORKDIR SANITIZE - cmake --install the build
# into WORKDIR/prefix, then configure, build and run the consumer against that prefix.
set -e
cmake=$1 build=$2 src=$3 work=$4 sanitize=$5
rm -rf "$work"
"$cmake" --install "$build" --prefix "$work/prefix" > "$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
flags=""
if [ -n "$sanitize" ]; then flags="-fsanitize=$sanitize"; fi
"$cmake" -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" > "$work.configure.log" 2>&1 || { cat "$work.configure.log"; exit 1; }
"$cmake" --build "$work/build" > "$work.build.log" 2>&1 || { cat "$work.build.log"; exit 1; }
"$work/build/consumer"
echo "find_package(ggml) consumer built and ran against $work/prefix"
