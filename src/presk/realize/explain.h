// presk explain: each kernel an entry launches, with its machine code beside the kernel line
// each instruction comes from (kernel/llvm_jit.h's machine_code; ../shared/seeds/
// presk-native.txt, "Each kernel's machine code can be read with the line of the kernel each
// byte compiles").
#pragma once
#include <string>
#include <vector>

#include "kernel/ir.h"
#include "kernel/llvm_jit.h"

namespace presk::realize {

/// The report of `kernels` in `format`:
///   text  per kernel its text with numbered lines, then its instructions in address order,
///         each `offset  bytes  instruction  ; line: the line's text`;
///   json  {"cpu", "kernels": [{"name", "text", "bytes", "instructions": [{"offset", "bytes"
///         (hex), "asm", "line"}]}]};
///   html  a page with each kernel's numbered text and a table of its instructions, each
///         linked to its line.
/// Throws presk::Error for another format, and as kernel::machine_code does (a build without
/// LLVM, a kernel LLVM refuses).
std::string explain(const std::vector<const kernel::Kernel*>& kernels, const std::string& format,
                    const kernel::NativeOptions& o = {});

} // namespace presk::realize
