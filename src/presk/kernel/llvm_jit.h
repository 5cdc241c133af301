// --backend native: a PSK-Kernel lowered to LLVM IR and compiled in process by LLVM's ORC
// LLJIT into a function of native.h's type (../shared/seeds/presk-native.txt, "The Cranelift
// backend" and "The code generator", with LLVM 16 in Cranelift's place).
//
// The machine code computes the kernel interpreter's bits (kernel/eval.cpp states the rules):
// every real operation one IEEE operation in the arithmetic type, no fast-math flag on any
// instruction and no contraction into FMA (the target's AllowFPOpFusion is Strict), so LLVM's
// passes can neither reassociate nor fuse; sqrt is llvm.sqrt, exp log tanh sin cos erf erfc pow
// are calls of pmath.h's functions at their addresses in this process (the code the
// interpreter calls); stores round as the interpreter's, integers are i64 with overflow and
// division by zero reported as native.h's statuses, and every index the loop bounds do not
// prove in range is checked.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/ir.h"
#include "kernel/native.h"

namespace presk::kernel {

/// The code generator's switches, one per rule of the seed's "The code generator" that has one
/// here (docs/presk.md, "The native backend", says which are LLVM's own passes). None changes
/// an operation or its order; they exist for the ablation, and the defaults are all on.
struct NativeOptions {
    int opt_level = 3;             // LLVM's O0..O3 pipeline (no fast-math: it cannot reassociate)
    bool register_output = true;   // an output element a loop does not move lives in a register
    bool loop_addresses = true;    // addresses from the loop structure: byte offsets, constants
                                   // folded, terms in loop order (off: sum over the axes)
    bool unroll = true;            // innermost loops unrolled (LLVM's loop unroller)
    bool vectorize = true;         // lane-wise loops over the machine's lanes (LLVM's loop and
                                   // SLP vectorizers: independent iterations, no reassociation)
    bool invariant_loads = true;   // input loads marked invariant and apart from the output
                                   // (!invariant.load, alias scopes, dereferenceable buffers)
};

/// Whether this build has the native backend (it was built with LLVM 16).
bool have_llvm();

/// Compiles `k` to machine code for the host CPU (its name and features). The kernel is
/// checked as the interpreter checks it (kernel::Compiled's errors, word for word) and its
/// LLVM module verified; each compile is one module under its own resource tracker of one
/// process-wide LLJIT (compiles are serialized), released when the last copy of the result's
/// `keep` goes; compiling the same kernel text at the same split depth (Kernel::split_depth)
/// with the same options while an earlier result is still held gives that result. The function needs the output buffer apart from every
/// input (inputs may share). Throws presk::Error naming the kernel when it is malformed or LLVM refuses it,
/// and "--backend native: presk was built without LLVM (install llvm-16-dev)" in a build
/// without LLVM.
NativeCode compile_llvm(const Kernel& k, const NativeOptions& o = {});

/// One machine instruction of a kernel's function: its offset in the function, its bytes,
/// LLVM's disassembler's text of it (AT&T syntax), and the line of the kernel's text
/// (kernel::to_string, the header line 1) whose statement it was compiled from; 0 for code of
/// no statement (the entry's buffer loads, the failure blocks).
struct MachineInstr {
    uint64_t offset = 0;
    std::vector<uint8_t> bytes;
    std::string text;
    int line = 0;
};

/// A kernel's machine code as a run compiles it, with each instruction's kernel line
/// (../shared/seeds/presk-native.txt: "Each kernel's machine code can be read with the line of
/// the kernel each byte compiles").
struct MachineListing {
    std::string cpu;                     // native_cpu()
    std::vector<uint8_t> bytes;          // the function's code, compiled with the lines
    std::vector<uint8_t> run_bytes;      // the same kernel compiled as a run compiles it (no lines)
    std::vector<MachineInstr> instrs;    // `bytes` disassembled, in order
};

/// Compiles `k` as compile_llvm does (the same IR, passes and target machine), once with each
/// statement's instructions carrying its kernel line as LLVM debug locations (whose object
/// code's line table gives each instruction's line) and once as a run compiles it, through the
/// JIT's own compile (`run_bytes`); disassembles the first with LLVM's MC disassembler. The
/// lines change no instruction: the two byte strings are equal (test-presk-explain). Throws as
/// compile_llvm does, and presk::Error when LLVM cannot emit, read or disassemble the code.
MachineListing machine_code(const Kernel& k, const NativeOptions& o = {});

/// The host CPU as LLVM names it ("sapphirerapids", "znver4", "neoverse-v2"): the target of
/// every compile. Empty without LLVM.
std::string native_cpu();

/// The widest lane count of the vector form (kernel::lower's `lanes`: 1, 2 or 4) that the
/// host's vector registers hold for storage type `t`: f32 four on SSE and wider, f64 two on
/// SSE and four from AVX on (AArch64: four and two). bf16 and i64 are 1 (bf16 stays scalar,
/// the seed's rule: a lane would need a conversion per element). 1 without LLVM.
int native_lanes(DType t);

/// The lanes of the host's widest vector register for storage type `t`: f32 16 and f64 8 with
/// AVX-512, 8 and 4 with AVX, 4 and 2 on SSE and AArch64; bf16 and i64 1; 1 without LLVM. The
/// layout space's "register's width" (the seed's "one or the register's width"): a plan may
/// state it for a tiled contraction, while a run's default lanes stay native_lanes.
int register_lanes(DType t);

/// Refuses (presk::Error) a lane count the machine type of a kernel of storage `t` does not
/// have: 1 always runs; otherwise a power of two from 2 to native_lanes of the arithmetic type
/// (bf16 is checked as f32, then lowered scalar). `what` starts the message ("--lanes 8").
void check_lanes(DType t, int lanes, const std::string& what);

} // namespace presk::kernel
