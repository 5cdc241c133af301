#!/bin/sh
# export_check.sh PRESK WORK BACKEND REALIZE FILE ENTRY [ARG]...: `presk export` of the entry
# (ARGs: its --dim, --input, --seed) in realization REALIZE into WORK/program, `make -C` there,
# then the program's output compared byte for byte with `presk run --backend BACKEND` on the
# same ARGs (c-conformance). Exits 77 (skipped) when there is no C compiler or no make, or the
# backend is native and this build has no LLVM.
set -u
presk=$1 work=$2 backend=$3 realize=$4 file=$5 entry=$6
shift 6
for tool in cc make; do
  if ! command -v $tool >/dev/null 2>&1; then echo "GK-SKIP: no $tool"; exit 77; fi
done
rm -rf "$work"
mkdir -p "$work"
"$presk" export "$file" --entry "$entry" "$@" --realize "$realize" --target c -o "$work/program" || exit 1
if ! make -s -C "$work/program" >"$work/make.log" 2>&1; then cat "$work/make.log"; exit 1; fi
name=$(sed -n 's/^PROGRAM = //p' "$work/program/Makefile")
"$work/program/$name" >"$work/export.txt" || exit 1
if ! "$presk" run "$file" --entry "$entry" "$@" --backend "$backend" --realize "$realize" >"$work/run.txt" 2>"$work/run.err"; then
  if grep -q "built without LLVM" "$work/run.err"; then echo "GK-SKIP: $(cat "$work/run.err")"; exit 77; fi
  cat "$work/run.err"
  exit 1
fi
if ! cmp -s "$work/export.txt" "$work/run.txt"; then
  echo "the exported program's output differs from presk run --backend $backend:"
  diff "$work/export.txt" "$work/run.txt" | head -20
  exit 1
fi
echo "same output: $(wc -l <"$work/run.txt") lines, $(wc -c <"$work/run.txt") bytes"
