// cpu_features.h - what the host CPU can run, read at run time (cpuid and the operating
// system's state on x86-64, HWCAP on AArch64), for choosing kernels and for the device
// banner.
//
// A feature counts only when the CPU reports it and the operating system enables its
// register state (XCR0 for the AVX and AVX-512 registers). AMX needs more: Linux hands out
// the tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM), and a virtual machine
// may advertise AMX in cpuid, set the XCR0 bits and grant the request, and still fault
// on the first tile instruction (seen on this project's machines, where llama.cpp dies
// with SIGILL). So amx_usable is the result of a guarded trial: configure a tile, zero
// it, release it, under a SIGILL handler, once per process.
#pragma once

namespace gk::cpu {

struct cpu_features {
    // x86-64
    bool amd        = false;  // the vendor string is "AuthenticAMD" (cpuid leaf 0)
    bool avx2       = false;  // with FMA, F16C and BMI2 (the x86-64-v3 level)
    bool avx512     = false;  // F, BW, DQ, VL and CD (the x86-64-v4 level)
    bool avx512vnni = false;
    bool avxvnni    = false;  // the VEX-encoded VPDPBUSD
    bool avx512bf16 = false;
    bool avx512fp16 = false;
    bool amx_advertised = false;  // cpuid says AMX-TILE and AMX-INT8
    bool amx_usable     = false;  // and a tile instruction ran (see the file comment)
    bool fast_gather    = false;  // AVX-512, Intel, and Linux reports the CPU not affected
                                  // by Gather Data Sampling: VPGATHER runs without the
                                  // microcode that slows it several-fold (the Intel
                                  // AVX-512 CPUs before Sapphire Rapids). Measured on
                                  // Emerald Rapids; not set elsewhere (AMD, AVX2-only
                                  // Intel: not measured)
    // AArch64
    bool neon    = false;
    bool dotprod = false;
};

/// The host's features (detected on the first call; thread-safe), less those the
/// environment's GK_CPU_DISABLE names (comma-separated: avx2, avx512, avx512vnni, avxvnni,
/// avx512bf16, avx512fp16, amx, gather, dotprod), for tests and ablations of the fallbacks.
const cpu_features & host_cpu();

} // namespace gk::cpu
