// The cc backend's compiler: a kernel printed as C (kernel/c_print.h), compiled by the system C
// compiler into a shared object with pmath, and loaded with dlopen; compiled objects kept in an
// on-disk cache shared by every presk process (docs/presk.md, "The cc backend").
#pragma once
#include <string>
#include <vector>

#include "kernel/ir.h"
#include "kernel/native.h"

namespace presk::kernel {

/// Where compile_cc finds its compiler and keeps what it compiled.
struct CcOptions {
    std::string compiler = "cc";  // a program name (searched in PATH) or a path; no arguments
    std::string cache;            // the cache folder; "" for none (a private temporary folder)

    /// PRESK_CC (else cc); PRESK_CACHE, else $XDG_CACHE_HOME/presk, else $HOME/.cache/presk.
    static CcOptions from_env();
};

/// The flags every kernel and pmath are compiled with: -std=c11 -O3 -march=native
/// -ffp-contract=off -fno-math-errno -fPIC (no fast-math: each operation rounds once).
const std::vector<std::string>& cc_flags();

/// `k` compiled to machine code through the C compiler. The cache holds one folder per key, the
/// hash of the compiled text: a header naming the compiler's `--version` first line, its target
/// (`-dumpmachine`), the hash of the macros -march=native predefines (the ISA the code may
/// use), the flags and the pmath object, then print_c's text. The text is stored beside the
/// library (kernel.c beside kernel.so, whose function is presk_kernel0) and compared on every
/// hit; a folder is published whole by a rename, so processes share the cache safely. pmath is
/// compiled once per cache and compiler into an object every kernel library links (its symbols
/// hidden there).
///
/// Notes (appended to `*note` when given, one line each; never printed): a cache entry whose
/// text differs from the kernel's or whose library does not load is reported as corrupt and
/// recompiled in its place; a cache folder that cannot be written is reported once per process
/// and folder, its entries still used, and what is missing compiled in a private temporary
/// folder removed at exit. Throws presk::Error: "--backend cc: the C compiler `X` was not found
/// (set PRESK_CC)" when it cannot be run; the compiler's command and output when it fails on the
/// kernel or on pmath; the kernel's own errors (print_c); no writable folder at all.
NativeCode compile_cc(const Kernel& k, const CcOptions& o = CcOptions::from_env(), std::string* note = nullptr);
/// Several kernels compiled into one library by one compiler run (one cache entry): result i
/// runs ks[i] (the function presk_kernel<i>); every result keeps the library loaded, and its
/// text is the whole translation unit. compile_cc of one kernel is this for {&k}.
std::vector<NativeCode> compile_cc(const std::vector<const Kernel*>& ks, const CcOptions& o = CcOptions::from_env(),
                                   std::string* note = nullptr);

} // namespace presk::kernel
