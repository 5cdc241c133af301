// cpu_features.cpp - run-time detection of the host's SIMD features (cpu_features.h).
//
// Bit positions: Intel 64 and IA-32 Architectures Software Developer's Manual, vol. 2A,
// CPUID (leaf 1 ECX, leaf 7 sub-leaf 0 EBX/ECX/EDX, sub-leaf 1 EAX) and vol. 1, 13.3
// (XCR0: bit 1 SSE, 2 AVX, 5-7 opmask and ZMM state, 17-18 AMX tile configuration and
// data). Linux's AMX permission: arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023,
// XFEATURE_XTILEDATA = 18), Documentation/arch/x86/xstate.rst.
#include "cpu_features.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <immintrin.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace gk::cpu {
namespace {

#if defined(__x86_64__)

bool bit(unsigned reg, int b) { return (reg >> b) & 1u; }

uint64_t read_xcr0() {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<uint64_t>(hi) << 32) | lo;
}

sigjmp_buf amx_trial_jump;

void amx_trial_fault(int) { siglongjmp(amx_trial_jump, 1); }

/// One tile configured, zeroed and released.
__attribute__((target("amx-tile"))) void amx_trial_body() {
    alignas(64) unsigned char cfg[64] = {};
    cfg[0]  = 1;   // palette 1
    cfg[16] = 64;  // tile 0: 64 bytes per row
    cfg[48] = 1;   // tile 0: 1 row
    __asm__ volatile("" : : "r"(cfg) : "memory");  // the configuration is in memory before LDTILECFG reads it
    _tile_loadconfig(cfg);
    _tile_zero(0);
    _tile_release();
}

/// The guarded trial of cpu_features.h: ask Linux for the tile state, then run
/// amx_trial_body under SIGILL and SIGSEGV handlers (a refused tile configuration is a
/// general-protection fault); the previous handlers are restored.
bool amx_trial() {
#if defined(__linux__)
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
        return false;
    }
#endif
    struct sigaction trial = {}, previous_ill = {}, previous_segv = {};
    trial.sa_handler       = amx_trial_fault;
    sigemptyset(&trial.sa_mask);
    if (sigaction(SIGILL, &trial, &previous_ill) != 0) {
        return false;
    }
    if (sigaction(SIGSEGV, &trial, &previous_segv) != 0) {
        sigaction(SIGILL, &previous_ill, nullptr);
        return false;
    }
    bool ok = false;
    if (sigsetjmp(amx_trial_jump, 1) == 0) {
        amx_trial_body();
        ok = true;
    }
    sigaction(SIGSEGV, &previous_segv, nullptr);
    sigaction(SIGILL, &previous_ill, nullptr);
    return ok;
}

/// True when Linux reports the CPU not affected by Gather Data Sampling (sysfs; false where
/// the file is missing or says anything else).
bool gather_not_affected() {
#if defined(__linux__)
    FILE * f = std::fopen("/sys/devices/system/cpu/vulnerabilities/gather_data_sampling", "r");
    if (!f) {
        return false;
    }
    char       line[64] = {};
    const bool read     = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    return read && std::strncmp(line, "Not affected", 12) == 0;
#else
    return false;
#endif
}

cpu_features detect() {
    cpu_features f;
    unsigned     a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {  // vendor string in EBX, EDX, ECX
        f.amd = b == 0x68747541u && d == 0x69746E65u && c == 0x444D4163u;  // "Auth" "enti" "cAMD"
    }
    if (!__get_cpuid(1, &a, &b, &c, &d) || !bit(c, 27)) {  // no OSXSAVE: no AVX state
        return f;
    }
    const unsigned leaf1_c = c;
    const uint64_t xcr0    = read_xcr0();
    const bool     ymm     = (xcr0 & 0x6) == 0x6;
    const bool     zmm     = ymm && (xcr0 & 0xE0) == 0xE0;
    const bool     tiles   = (xcr0 & 0x60000) == 0x60000;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        return f;
    }
    f.avx2       = ymm && bit(leaf1_c, 28) && bit(leaf1_c, 12) && bit(leaf1_c, 29) && bit(b, 5) && bit(b, 8);
    f.avx512     = zmm && f.avx2 && bit(b, 16) && bit(b, 17) && bit(b, 28) && bit(b, 30) && bit(b, 31);
    f.avx512vnni = f.avx512 && bit(c, 11);
    f.avx512fp16 = f.avx512 && bit(d, 23);
    f.amx_advertised = bit(d, 24) && bit(d, 25);
    unsigned a1 = 0, b1, c1, d1;
    __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
    f.avxvnni    = f.avx2 && bit(a1, 4);
    f.avx512bf16 = f.avx512 && bit(a1, 5);
    f.amx_usable = f.amx_advertised && tiles && amx_trial();
    f.fast_gather = f.avx512 && !f.amd && gather_not_affected();
    return f;
}

#elif defined(__aarch64__)

cpu_features detect() {
    cpu_features f;
    f.neon = true;  // Advanced SIMD is part of every AArch64 CPU
#if defined(__linux__)
    f.dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
    return f;
}

#else

cpu_features detect() { return {}; }

#endif

/// The features GK_CPU_DISABLE names (a comma-separated list) turned off, so that tests
/// and ablations can run a host's fallbacks; an unknown name is reported on stderr.
cpu_features with_disabled(cpu_features f) {
    const char * list = std::getenv("GK_CPU_DISABLE");
    if (!list) {
        return f;
    }
    const struct {
        const char * name;
        bool cpu_features::*flag;
    } names[] = {{"avx2", &cpu_features::avx2},
                 {"avx512", &cpu_features::avx512},
                 {"avx512vnni", &cpu_features::avx512vnni},
                 {"avxvnni", &cpu_features::avxvnni},
                 {"avx512bf16", &cpu_features::avx512bf16},
                 {"avx512fp16", &cpu_features::avx512fp16},
                 {"amx", &cpu_features::amx_usable},
                 {"gather", &cpu_features::fast_gather},
                 {"dotprod", &cpu_features::dotprod}};
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, ',');) {
        bool known = false;
        for (const auto & n : names) {
            if (item == n.name) {
                f.*n.flag = false;
                known     = true;
            }
        }
        if (!known && !item.empty()) {
            std::fprintf(stderr, "gk: GK_CPU_DISABLE: unknown feature '%s' ignored\n", item.c_str());
        }
    }
    return f;
}

} // namespace

const cpu_features & host_cpu() {
    static const cpu_features f = with_disabled(detect());
    return f;
}

} // namespace gk::cpu
