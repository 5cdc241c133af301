// The kernel backend's executor (--backend kernel): the host program is the PSK-Core body
// evaluated over runtime values (calls, folds, tuples, records, the structural primitives,
// initializers and sample on the host with the reference's ChaCha keys); every fusion group
// is one kernel launch, its kernel lowered on first use and cached by signature
// (../shared/seeds/presk-native.txt, "The seam", "PSK-Kernel v0").
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/core.h"
#include "kernel/eval.h"
#include "kernel/ir.h"
#include "kernel/lower.h"
#include "kernel/native.h"
#include "realize/plan.h"
#include "realize/realization.h"
#include "ref/values.h"

namespace presk::realize {

/// A runtime value of the kernel backend: a tensor (`t`, its buffer in the storage type of
/// the site that produced it, its elements shared with every value that reads them) or a
/// tuple/record of values (`items`); `type` is always set.
struct Value {
    TypeP type;
    std::optional<kernel::Data> t;
    std::vector<Value> items;
};

/// A reference value crossing the seam into storage type `t`: each real rounded to f64, then
/// to `t` (round_to); integers and masks as i64.
Value from_ref(const ref::Value& v, kernel::DType t);
/// The way back, for comparison: every element exactly, reals as MPFR numbers of
/// max(bits, 53) bits.
ref::Value to_ref(const Value& v, long bits = 64);
/// `v` printed as the reference prints a value (ref::write_text, ref::write_json: the same
/// text as for to_ref(v)), from the buffers themselves (no MPFR copy of the value).
void write_text(std::ostream& os, const Value& v, int digits);
void write_json(std::ostream& os, const Value& v, int digits);

/// One launch: the site of the group's root and the kernel run (owned by the executor's cache).
struct Launch {
    std::string site;
    const kernel::Kernel* kernel = nullptr;
};

/// What runs a launch's kernel: the kernel interpreter (kernel::Compiled), or machine code
/// (kernel::NativeCode) from the in-process compiler (native) or the system C compiler (cc).
enum class Backend { Kernel, Native, Cc };

/// "kernel", "native", "cc".
const char* backend_name(Backend b);
/// The backend named `name`. Throws presk::Error naming the three otherwise.
Backend parse_backend(const std::string& name);

/// Called after every launch with its kernel, the buffers it read (each in the type the kernel
/// declares) and the buffer it wrote; the buffers live only during the call (presk export
/// records a run's launches with it).
using LaunchHook =
    std::function<void(const kernel::Kernel&, const std::vector<const kernel::Data*>&, const kernel::Data&)>;

struct ExecOptions {
    uint64_t seed = 0;    // the reference's seed, for sample and dropout streams
    bool train = false;   // dropout draws its mask only when training
    bool fuse = true;     // form fusion groups (off: one launch per primitive)
    Backend backend = Backend::Kernel;
    int threads = 1;      // workers a machine-code kernel's split loop may be divided among
    double split_work = kernel::kSplitWork;  // the work above which it is divided (0: always)
    int lanes = 1;        // the vector width native and cc kernels are lowered at (kernel::lower);
                          // 0: each type's width (2 f64, 4 f32, bf16 scalar)

    Plan plan = {};       // a layout point per site (--plan @FILE; empty: every nest at its default)
    /// Quantised parameters' blocks as stored (realize/params_gguf.h, --params FILE.gguf), by
    /// path: a parameter the realization quantises takes them instead of encoding its values.
    std::map<std::string, kernel::Data> blocks = {};

    bool log_launches = true;  // keep every launch's site and kernel for launches() (off: a run
                               // that never reads it, as presk run and bench, keeps no log)

    LaunchHook on_launch = nullptr;  // when set, called after every launch
    /// When set, called with what a compiler reports without failing (the cc backend's cache:
    /// a corrupt entry recompiled, an unwritable folder replaced by a temporary one).
    std::function<void(const std::string&)> on_note = nullptr;
};

/// Compiles `k` to machine code for backend `b` (Native: kernel/llvm_jit.h; Cc: kernel/cc.h,
/// configured from the environment), the one place the machine-code compilers connect to the
/// executor; `note` receives what the compiler reports without failing. Throws presk::Error
/// when the backend is not built or refuses the kernel.
kernel::NativeCode compile_native(Backend b, const kernel::Kernel& k, std::string* note = nullptr);

/// prepare(entry, realization) then call(values), as the seam says.
class Executor {
public:
    /// Binds `p` (kept by reference) to realization `r`. Throws presk::Error with code E7002
    /// naming the site when the kernel backend refuses the realization (an accumulation type
    /// other than the storage's arithmetic type, an interleaved order, ...), or naming a site
    /// or parameter the realization mentions that the program does not have; with "E7002: plan
    /// @FILE" when a point of `o.plan` does not apply (a site that is not a kernel launch, a
    /// point its nest does not admit, lanes other than 1 or the register's width on native and
    /// cc, a split whose loop is not parallel (condition 8) or, on native and cc, whose workers
    /// are not `o.threads` or half of it (condition 5)); or when
    /// `o.threads` is below 1 or `o.lanes` below 0 (a lane count the host lacks is refused when a
    /// kernel is lowered: kernel::check_lanes).
    Executor(const core::Program& p, Realization r, ExecOptions o = {});
    ~Executor();

    /// Runs function `fn` on `args` (reference values, converted at the edge). Throws
    /// presk::Error naming the site on a runtime failure (an index out of range, say).
    Value call(const std::string& fn, const std::vector<ref::Value>& args);
    /// The conversion call() makes at the edge: each argument checked against `fn`'s
    /// parameter types and converted by from_ref to the default storage type, the entry
    /// module's parameter tree leaf by leaf to the type `params` gives it, or to the int8 or
    /// int4 blocks `quant` gives it (ExecOptions::blocks, or encoded by gk's encoder:
    /// kernel/quant.h).
    std::vector<Value> convert_args(const std::string& fn, const std::vector<ref::Value>& args) const;
    /// Runs `fn` on arguments already converted (so that a benchmark times the calls alone;
    /// the arguments share their elements with the call's values, and no call writes them).
    Value call_values(const std::string& fn, const std::vector<Value>& args);

    /// Every launch of the calls so far, in order (empty when ExecOptions::log_launches is off).
    const std::vector<Launch>& launches() const;
    /// How many launches the same calls would have made without fusion.
    int64_t unfused_launches() const;
    /// The distinct kernels launched, in the order of their first launch.
    std::vector<const kernel::Kernel*> kernels() const;
    /// A nest a plan may lay out: its node, its storage type, and for a contraction whose value
    /// only a bias add reads (dot(x, w) + b) that add, where a point with a bias can fold it in
    /// (the conditions the executor checks a plan's epilogue against).
    struct Nest {
        kernel::Node node;
        kernel::DType dtype = kernel::DType::F64;
        std::optional<kernel::Node> bias_add;
    };
    /// The nests a plan may lay out, by site: every group root reachable from the entry that
    /// launches a dot, matmul, ein or softmax (a contraction with its epilogue included).
    std::map<std::string, Nest> nests();
    /// The free lists the launches' outputs come from (kernel::BufferPool; its counts show the reuse).
    const kernel::BufferPool& buffers() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace presk::realize
