// The listing of a function in an object file LLVM emitted (kernel/llvm_jit.h's
// machine_code): its bytes, each instruction disassembled by LLVM's MC disassembler, and each
// instruction's line from the object's DWARF line table. Compiled with LLVM's headers only in
// a build with LLVM (the declarations use none).
#pragma once
#include <string>

#include "kernel/llvm_jit.h"

namespace presk::kernel {

/// The code of function `fname` in the relocatable object file `object` (the symbol's bytes in
/// its section). Throws presk::Error when the object cannot be read or has no such function.
std::vector<uint8_t> function_bytes(const std::string& object, const std::string& fname);

/// function_bytes of `fname` in `object`, disassembled for target `triple`, CPU `cpu` with
/// `features`, each instruction with the line the object's line table gives its address (0
/// where it gives none). Throws presk::Error as function_bytes does, or when LLVM has no
/// disassembler for the target.
MachineListing list_object(const std::string& object, const std::string& fname, const std::string& triple,
                           const std::string& cpu, const std::string& features);

} // namespace presk::kernel
