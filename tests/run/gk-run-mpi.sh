#!/bin/sh
# gk-run-mpi.sh GK_RUN MPIEXEC MODELS WORKDIR - gk-run --mpi (docs/mpi.md) on one machine:
#   - stories260K (5 layers) split over 2 and 3 ranks prints the same text and writes the
#     same --dump-logits bytes as one process (several micro-batches: -ub 7), and so does
#     gemma3-random (sliding-window and global layers) over 2;
#   - 3 ranks for 2 layers (qwen3-random): every rank says so, the job exits non-zero;
#   - a missing rank (a process of the job that is not gk-run), a rank that fails alone
#     half-way (its context is smaller), a rank killed: the job exits non-zero, no hang.
# Every mpiexec is bounded by `timeout`; its exit status 124 (the bound hit) fails the test.
# MPIEXEC empty (a build without MPI): checks that --mpi says so, then skips (77), as it
# does when mpiexec is not installed.
gk_run=$1 mpiexec=$2 models=$3 work=$4
stories=$models/stories260K.gguf
prompt="One day a little girl named Lily went to the park with her mother"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export GK_QUIET=1

if [ -z "$mpiexec" ]; then
    "$gk_run" -m "$stories" -p hi -n 1 --mpi > /dev/null 2> "$work.nompi.err"
    rc=$?
    if [ $rc -eq 0 ] || ! grep -q "no MPI backend" "$work.nompi.err"; then
        cat "$work.nompi.err"
        echo "FAIL: gk-run --mpi in a build without MPI: exit $rc, and no message saying so"
        exit 1
    fi
    echo "gk-run --mpi without MPI: '$(cat "$work.nompi.err")'"
    echo "SKIP: this build has no MPI (GK_MPI=OFF, or no MPI found)"
    exit 77
fi
if ! command -v "$mpiexec" > /dev/null 2>&1; then
    echo "SKIP: $mpiexec is not installed (Debian: openmpi-bin)"
    exit 77
fi
# Open MPI refuses root without these; containers often forbid the single-copy (CMA) path.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mkdir -p "$work"

# mpi NAME SECONDS ARGS... - mpiexec ARGS bounded by SECONDS, output in $work/NAME.{out,err},
# exit status in $rc.
mpi() {
    name=$1 seconds=$2
    shift 2
    timeout -k 10 "$seconds" "$mpiexec" --oversubscribe "$@" > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
    if [ $rc -eq 124 ]; then
        tail -20 "$work/$name.err"
        fail "$name: mpiexec still running after $seconds s (a hang)"
    fi
}

# same MODEL NP - the run over NP ranks against one process.
same() {
    model=$1 np=$2 base=$(basename "$1" .gguf)
    if ! "$gk_run" -m "$model" -p "$prompt" -n 24 --temp 0 -ub 7 --dump-logits "$work/$base.one.bin" \
        > "$work/$base.one.out" 2> "$work/$base.one.err"; then
        cat "$work/$base.one.err"
        fail "$base: one process failed"
        return
    fi
    mpi "$base.np$np" 240 -np "$np" "$gk_run" -m "$model" -p "$prompt" -n 24 --temp 0 -ub 7 \
        --dump-logits "$work/$base.np$np.bin" --mpi
    if [ $rc -ne 0 ]; then
        tail -20 "$work/$base.np$np.err"
        fail "$base over $np ranks: exit $rc"
    elif ! cmp "$work/$base.one.out" "$work/$base.np$np.out" || ! cmp "$work/$base.one.bin" "$work/$base.np$np.bin"; then
        fail "$base over $np ranks: not the text and logits of one process"
    else
        echo "ok: $base over $np ranks = one process ($(wc -c < "$work/$base.one.bin") bytes of logits)"
    fi
}

same "$stories" 2
same "$stories" 3
same "$models/gemma3-random.gguf" 2

# More ranks than layers: each of the 3 ranks names the problem (qwen3-random has 2).
mpi too-many 120 -np 3 "$gk_run" -m "$models/qwen3-random.gguf" -p hi -n 4 --mpi
n=$(grep -c "the model has 2 layers, fewer than the 3 MPI ranks" "$work/too-many.err")
if [ $rc -eq 0 ] || [ "$n" -ne 3 ]; then
    cat "$work/too-many.err"
    fail "3 ranks for 2 layers: exit $rc, $n of 3 ranks said why"
else
    echo "ok: 3 ranks for 2 layers: exit $rc, every rank said why"
fi

# A missing rank: the second process of the job is not gk-run, so rank 0 waits for it at
# the start until --mpi-start-timeout.
mpi missing 120 -np 1 "$gk_run" -m "$stories" -p hi -n 4 --mpi --mpi-start-timeout 5 : -np 1 true
if [ $rc -eq 0 ] || ! grep -q "not every MPI rank started" "$work/missing.err"; then
    cat "$work/missing.err"
    fail "a missing rank: exit $rc, no message"
else
    echo "ok: a missing rank: exit $rc, '$(grep "not every MPI rank" "$work/missing.err")'"
fi

# Rank 1 alone runs out of context half-way: it aborts the job, rank 0 does not wait.
mpi alone 120 -np 1 "$gk_run" -m "$stories" -p "$prompt" -n 40 --temp 0 --mpi : \
    -np 1 "$gk_run" -m "$stories" -p "$prompt" -n 40 --temp 0 -c 24 --no-context-shift --mpi
if [ $rc -eq 0 ] || ! grep -q "rank 1: context full" "$work/alone.err"; then
    cat "$work/alone.err"
    fail "a rank failing alone: exit $rc, no message from it"
else
    echo "ok: a rank failing alone: exit $rc, '$(grep "rank 1: context full" "$work/alone.err")'"
fi

# Rank 1 is killed (whenever that is: before MPI starts rank 0 ends at its start timeout,
# after it mpiexec ends the job).
mpi killed 120 -np 1 "$gk_run" -m "$stories" -p "$prompt" -n 4000 --ignore-eos --mpi --mpi-start-timeout 20 : \
    -np 1 timeout -s KILL 2 "$gk_run" -m "$stories" -p "$prompt" -n 4000 --ignore-eos --mpi
if [ $rc -eq 0 ]; then
    fail "a rank killed: exit 0"
else
    echo "ok: a rank killed: exit $rc"
fi

if [ $fails -ne 0 ]; then
    echo "$fails failure(s); outputs in $work"
    exit 1
fi
echo "all MPI checks passed"
