#!/bin/sh
# abi_compare.sh CC PROBE OURS_INCLUDE REF_INCLUDE WORKDIR - compile the ABI probe against
# our headers and the reference's, run both, compare. Exit 77 (skipped) without a reference.
set -e
cc=$1 probe=$2 ours=$3 ref=$4 work=$5
if [ -z "$ref" ] || [ ! -f "$ref/ggml.h" ]; then
    echo "reference ggml headers not found (set GK_COMPAT_REFERENCE_INCLUDE); skipped"
    exit 77
fi
mkdir -p "$work"
"$cc" -std=c11 -I"$ours" "$probe" -o "$work/probe-ours"
"$cc" -std=c11 -I"$ref" "$probe" -o "$work/probe-ref"
"$work/probe-ours" > "$work/abi-ours.txt"
"$work/probe-ref" > "$work/abi-ref.txt"
diff "$work/abi-ref.txt" "$work/abi-ours.txt"
echo "$(wc -l < "$work/abi-ours.txt") ABI facts equal to the reference's ($ref)"
