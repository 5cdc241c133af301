// `presk export --target c`: an entry as a standalone C program. The entry runs once on the
// kernel backend with every launch recorded; the program repeats those launches in order
// through the kernels printed as C (kernel/c_print.h), then prints the entry's outputs in
// `presk run`'s text (../shared/seeds/presk-native.txt: "export ... computes the same bits").
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/core.h"
#include "realize/executor.h"
#include "realize/realization.h"
#include "ref/values.h"

namespace presk::realize {

/// The program's folder: its files (name, text) and what they hold.
struct CExport {
    std::string name;  // the executable the Makefile builds
    std::vector<std::pair<std::string, std::string>> files;
    int64_t kernels = 0, launches = 0;
};

/// Runs the entry of `p` on `args` (the reference's values, as `presk run` synthesises them) on
/// the kernel backend in realization `r` (`o`: seed and training; its hook is the recording)
/// and writes it as a C program named `name` (a C-file-safe spelling of it is used):
///   - kernel<i>.c: each distinct kernel launched, print_c's text, defining presk_kernel<i>;
///   - pmath.c, pmath.h: the transcendental functions the kernels call;
///   - main.c: the launches in order, each input that holds the bytes of an earlier launch's
///     output (or of an earlier input) passed that buffer, every other input (parameters,
///     inputs, values the host made) embedded as its exact bits; then each output component
///     printed as `presk run` prints it ("out0 : <type> = [...]", `digits` significant digits,
///     the C library's printf %.*g, which rounds the exact binary value to nearest even as
///     MPFR's %Rg does);
///   - Makefile: `make` builds ./<name> with cc -O2 -std=c11 -ffp-contract=off (no fast-math).
/// Throws presk::Error as Executor does (a refused realization, a runtime failure).
CExport export_c(const core::Program& p, const Realization& r, const std::vector<ref::Value>& args, ExecOptions o,
                 const std::string& name, int digits);

} // namespace presk::realize
