// The conformance suite: a kernel backend against the reference interpreter at 256 bits,
// with the seed's tolerance |x - x̂| <= eps (|x| + a) per element (../shared/seeds/
// presk-native.txt, "Conformance"): eps = 2^-40, a = 2^-50 (f64); 2^-15, 2^-20 (f32);
// 2^-4, 2^-5 (bf16). A machine-code backend (native, cc) must moreover give the kernel
// interpreter's bits, element for element.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "realize/executor.h"
#include "realize/realization.h"

namespace presk::realize {

/// One case: an entry of a PSK text at bound dims, run on the inputs the reference
/// synthesises (seed `seed`), `given` real scalar inputs fixed.
struct Case {
    std::string name;    // as printed in the table
    std::string path;    // the file, for messages
    std::string text;    // the PSK source
    std::string entry;
    std::map<std::string, int64_t> dims;
    std::map<std::string, std::string> given;
    std::map<std::string, std::string> consts;  // `const` overrides (--const k=v) of the seed's runs; the
                                                // zeros-drawn pass runs the file's own values instead
    bool example = false;  // one of the seed's example entries: its bf16 band is asserted too
};

/// The band of a storage type: {eps, a}.
struct Band {
    double eps = 0, a = 0;
};
Band band_of(kernel::DType t);

/// The outcome of one case in one realization.
struct Result {
    std::string name, realization;
    int64_t compared = 0;   // real elements compared
    int64_t outside = 0;    // real elements outside the band
    int64_t cancelling = 0; // of those, the ones inside the band when the floor a is raised to
                            // the largest magnitude of the whole output: small results of
                            // larger terms cancelling (a structural zero of a gradient, say)
    double worst = 0;       // max |x - x̂| / (|x| + a) over the elements
    double worst_factor = 0;  // max of that over eps (> 1: outside the band)
    double worst_exact = 0, worst_got = 0;  // the element with the worst gap: reference, backend
    std::string worst_leaf;   // its leaf's path in the output tree and its flat index
    int64_t int_mismatch = 0;  // integer elements that differ from the reference
    int64_t bits_differ = 0;   // a backend other than kernel: elements (real or integer) whose
                               // bits differ from the kernel interpreter's on the same inputs
    std::string error;      // a refusal or a runtime error; empty when it ran
    bool pass() const { return error.empty() && outside == 0 && int_mismatch == 0 && bits_differ == 0; }
};

struct SuiteOptions {
    long bits = 256;
    uint64_t seed = 7;
    bool zeros_drawn = false;  // every parameter initialised to zeros is drawn normal(0, 1)
    Backend backend = Backend::Kernel;  // the backend measured
    int threads = 1, lanes = 1;         // its ExecOptions
};

/// The primitive cases: every tensor primitive on random operands (run in f64 and f32).
std::vector<Case> primitive_cases();
/// The example entries of `examples_dir` (the repository's examples/): mse, mse_grad, the
/// norms, MiniGPT.apply, its loss, adamw.step, next_token, loss_grad through the stacked
/// blocks, the regression's loss (the seed's list, `example` set) and the tutorial's
/// Linear.apply, Attention.apply and the regression's gradient. Throws presk::Error when a
/// file is missing.
std::vector<Case> example_cases(const std::string& examples_dir);

/// Runs `c` once on the reference, then on the backend `o` names in each realization of `rs`,
/// and compares; for a backend other than kernel also the kernel interpreter on the same
/// inputs, counting the elements whose bits differ (Result::bits_differ). One result per
/// realization. Never throws for a problem of the case (a refusal, a runtime error, a backend
/// that is not built): it is reported in Result::error.
std::vector<Result> run_case(const Case& c, const std::vector<Realization>& rs, const SuiteOptions& o);

/// Whether the suite asserts `r`'s band (else it reports it): a primitive case in f64 and f32;
/// an example in f64 and f32, and in bf16 when it is one of the seed's (`example`); with the
/// zeros drawn only f64, and only where the elements outside the band are not all sums that
/// cancel. Realizations other than the uniform f64, f32 and bf16 are reported. Bits that
/// differ from the kernel interpreter's are a failure in every realization, asserted or not.
bool asserted(const Case& c, const Result& r, bool zeros_drawn);

/// The table `presk conformance` prints: one row per case, one column per realization
/// (worst gap, with `!` after a gap outside the band and the count outside, `bits!` and the
/// count of elements whose bits differ from the kernel interpreter's).
std::string table(const std::vector<Result>& results);

} // namespace presk::realize
