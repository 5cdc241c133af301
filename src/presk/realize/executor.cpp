// The kernel backend's executor: the realization checked against the program (E7002), the
// host program evaluated over runtime values as the reference interpreter evaluates PSK-Core,
// and one kernel launch per fusion group, its kernel lowered on first use and cached by
// signature (docs/presk.md, "The kernel backend").
#include "realize/executor.h"

#include <mpfr.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>
#include <variant>

#include "core/prims.h"
#include "kernel/cc.h"
#include "lang/stack.h"
#include "kernel/launch.h"
#include "kernel/layout.h"
#include "kernel/llvm_jit.h"
#include "kernel/quant.h"
#include "kernel/lower.h"
#include "lang/source.h"
#include "realize/host.h"
#include "ref/real.h"

namespace presk::realize {
namespace {

using kernel::DType;
using kernel::Kernel;

/// A launch whose output has more elements than this is refused (the reference's limit is 2^24).
constexpr int64_t kMaxElements = int64_t(1) << 26;

/// Primitives whose kernels sum (core::kSums: the only sites an accumulation type means something at).
bool sums(const std::string& prim) {
    const std::optional<core::Prim> p = core::find_prim(prim);
    return p && core::has(*p, core::kSums);
}

/// Primitives that draw from the reference's random streams (core::kRandom: sample, dropout).
bool random(const core::Let& l) {
    const std::optional<core::Prim> p = l.op == core::Op::Prim ? core::find_prim(l.name) : std::nullopt;
    return p && core::has(*p, core::kRandom);
}

const char* what_is(const core::Let& l) {
    switch (l.op) {
    case core::Op::Lit: return "a literal";
    case core::Op::Call: return "a call";
    case core::Op::Loop: return "a fold or scan";
    case core::Op::Tuple: return "a tuple";
    case core::Op::Record: return "a record";
    case core::Op::Get: return "a projection";
    case core::Op::Prim: return "a structural primitive";
    }
    return "a let";
}

/// What a site is, for the realization's checks.
struct SiteInfo {
    enum Kind { Root, Member, Host, Random } kind = Host;
    std::string prim;   // Root, Random: the primitive; Host: what the let is
    std::string root;   // Member: the site of its group's root
    bool epilogue = false;  // Member: an epilogue's add (its storage may be named: it must be the group's)
};

/// What a launch runs: the interpreter's program, or machine code.
using Code = std::variant<kernel::Compiled, kernel::NativeCode>;

Code compile(const ExecOptions& o, const Kernel& k) {
    if (o.backend == Backend::Kernel) return kernel::Compiled(k);
    std::string note;
    kernel::NativeCode c = compile_native(o.backend, k, &note);
    if (!note.empty() && o.on_note) o.on_note(note);
    const Backend b = o.backend;
    if (!c.fn) throw Error({}, "kernel " + k.name + ": the " + backend_name(b) + " backend gave no function");
    return c;
}

} // namespace

/// A kernel of the cache and its compiled form (translated once, run at every launch): the
/// interpreter's program (Backend::Kernel) or machine code (Native, Cc) with the loop a call
/// runs a range of, and the element count of every buffer (what each launch is checked against).
struct Cached {
    Kernel k;
    Code code;
    kernel::LaunchPlan plan;
    std::vector<int64_t> counts;  // kernel::buffer_counts(k)
    bool launched = false;        // listed in the executor's kernels() already
    Cached(Kernel kernel, const ExecOptions& o)
        : k(std::move(kernel)), code(compile(o, k)), plan(kernel::plan_launch(k, o.split_work)), counts(kernel::buffer_counts(k)) {}
};

namespace {

/// Runs `c` on `in` into `out` (of the output's type and count, shared with no other Data):
/// every launch of every backend goes through here. `bufs` holds the buffer array (reused).
void run_kernel(const Cached& c, const std::vector<const kernel::Data*>& in, kernel::Data& out, kernel::Pool* workers,
                std::vector<void*>& bufs) {
    if (const auto* interp = std::get_if<kernel::Compiled>(&c.code)) {
        interp->run(in, out);
        return;
    }
    const kernel::NativeCode& code = std::get<kernel::NativeCode>(c.code);
    kernel::check_buffers(c.k, c.counts, in, out);
    bufs.clear();
    for (const kernel::Data* d : in) bufs.push_back(const_cast<void*>(d->raw()));  // a kernel writes only its output
    bufs.push_back(out.raw());
    kernel::launch(c.k, c.plan, code, bufs.data(), workers);
}

/// Whether `a` and `b` are the same elements of one buffer.
bool same_elements(const kernel::Data& a, const kernel::Data& b) {
    return a.raw() == b.raw() && a.size() == b.size() && a.dtype() == b.dtype();
}

} // namespace

/// Where a kernel is launched from (a fused group, or one member of it run alone): its site,
/// its kernel, lowered on first use, and the variants that declare some inputs in other types.
/// The choice of the last launch is kept with the input types it was made for, so that a
/// launch whose inputs have the types of the last forms no signature and searches no cache.
struct Slot {
    std::string sig;                 // kernel::signature of the primitive or group
    std::string site;                // the site its launches are logged under
    Cached* base = nullptr;          // every real input declared in the storage type
    std::vector<bool> literal;       // per input: a literal of the function
    std::vector<std::pair<std::vector<DType>, Cached*>> variants;
    std::vector<int> last_types;     // per input: its buffer's type at the last launch, -1 for none
    Cached* last = nullptr;          // the kernel chosen for them
    int64_t count = -1;              // the result's element count, checked at the first launch
    /// Per input: a literal and its conversion to the type the kernel declares (made once).
    std::vector<std::pair<kernel::Data, kernel::Data>> constants;
};

/// What the executor decides once about a let of a function's body.
struct Step {
    bool skip = false;                       // a member of a fused group, computed at its root
    int member = -1;                         // its place in its group (the slot of its own launch)
    const core::Function* callee = nullptr;  // Call, Loop: the function named, null when none
    DType dtype = DType::F64;                // a host primitive: the storage type of its site
    bool random = false;                     // a host primitive drawing from the random streams
    std::optional<Value> literal;            // Lit: its value, made at its first evaluation
    std::vector<int> release;                // values read here for the last time, or never read: dropped after it
    std::vector<bool> take;                  // per argument: moved, not copied (its last read, once; or a
                                             // projection's item no later projection reads)
};

/// A function's partition with what the executor adds per group: its site, storage type and
/// launch slots (fused, and one per member for the runs without fusion); and a step per let.
struct FnPlan {
    const core::Function* f = nullptr;
    detail::Partition part;
    struct Group {
        std::string site;
        DType dtype = DType::F64;
        Slot fused;
        std::vector<Slot> members;
        std::optional<kernel::Layout> layout;  // the plan's point for the site, its lanes resolved
        Slot pack;                             // the launch of the point's pack
        TypeP panel;                           // the pack's output
    };
    std::vector<Group> groups;
    std::vector<Step> steps;  // by body position
    std::vector<int> unread;  // the parameters no let reads (dropped at the end)
};

struct Executor::Impl {
    const core::Program& p;
    Realization r;
    ExecOptions o;
    std::unordered_map<const core::Function*, FnPlan> plans;
    std::map<std::string, std::unique_ptr<Cached>> cache;
    std::vector<std::pair<const std::string*, const Kernel*>> log;  // every launch's site and kernel
    mutable std::vector<Launch> launches;                            // the log as launches() gives it
    std::vector<const Kernel*> first;  // distinct kernels in first-launch order
    std::map<std::string, kernel::Layout> planned;  // the plan's points, checked, lanes resolved
    std::set<std::string> epilogues;                // the plan's sites with a bias (fusion's input)
    int64_t unfused = 0;
    std::vector<std::string> ctx;  // the enclosing fold steps, for random keys
    int depth = 0;
    std::deque<std::vector<Value>> frames;  // by call depth: the environments, reused call after call
    kernel::BufferPool buffers;  // the launches' outputs, host primitives' results, stacks
    std::unique_ptr<kernel::Pool> workers;  // machine-code launches at threads > 1 (divided kernels)
    detail::TypeMemo types;  // stacks' and layers' types
    // Scratch of one launch or host primitive (neither calls a function).
    std::vector<const Value*> values;
    std::vector<kernel::Data> held;
    std::vector<const kernel::Data*> ptrs;
    std::vector<void*> bufs;

    Impl(const core::Program& prog, Realization real, ExecOptions opt) : p(prog), r(std::move(real)), o(opt) {
        for (const auto& [site, point] : o.plan.layout)
            if (point.bias) epilogues.insert(site);
    }

    /// The lanes kernels of storage type `t` are lowered at: 1 on the kernel interpreter;
    /// ExecOptions::lanes on the machine-code backends, 0 there meaning the widest the host's
    /// registers hold that the lowering takes (kernel::native_lanes; bf16 stays scalar).
    int lanes(DType t) const {
        if (o.backend == Backend::Kernel) return 1;
        if (!o.lanes) return kernel::native_lanes(t);
        kernel::check_lanes(t, o.lanes, "--lanes " + std::to_string(o.lanes));
        return o.lanes;
    }

    FnPlan& plan(const core::Function& f) {
        auto it = plans.find(&f);
        if (it != plans.end()) return it->second;
        FnPlan fp;
        fp.f = &f;
        fp.part = detail::partition(f, epilogues);
        for (const detail::FusionGroup& g : fp.part.groups) {
            FnPlan::Group pg;
            pg.site = detail::site_of(f, f.body[(size_t)g.named()]);
            pg.dtype = r.storage_of(pg.site);
            pg.fused.sig = g.elementwise ? kernel::signature(g.group, pg.dtype) : kernel::signature(g.node, pg.dtype);
            pg.fused.site = pg.site;
            pg.fused.literal = g.literal;
            for (int pos : g.lets) {
                Slot m;
                m.sig = kernel::signature(detail::node_of(f, f.body[(size_t)pos]), pg.dtype);
                m.site = detail::site_of(f, f.body[(size_t)pos]);
                m.literal = detail::literal_args(f, f.body[(size_t)pos].args);
                pg.members.push_back(std::move(m));
            }
            apply_plan(pg);
            fp.groups.push_back(std::move(pg));
        }
        fp.steps = steps(f, fp.part, fp.unread);
        return plans.emplace(&f, std::move(fp)).first->second;
    }

    /// The plan's point for `pg`'s site, if any: its kernels are cached under their own key.
    void apply_plan(FnPlan::Group& pg) const {
        auto it = planned.find(pg.site);
        if (it == planned.end() || pg.layout) return;
        pg.layout = it->second;
        pg.fused.sig += " @ " + kernel::to_string(it->second);
        pg.pack.sig = "pack of " + pg.fused.sig;
        pg.pack.site = pg.site;
    }

    /// The kernels of group `fg` at the point `l`: the pack's (if any), then the nest's.
    static std::vector<Kernel> at_point(const detail::FusionGroup& fg, DType t, const kernel::Layout& l) {
        if (!fg.elementwise) return kernel::lower_layout(fg.node, t, l);
        Kernel k = kernel::lower_group(fg.group, t);
        k.split_depth = l.split_depth;
        k.split_workers = l.split_workers;
        return {std::move(k)};
    }

    /// The launches of a planned group from slot `s`: the pack of operand 1 first when the
    /// point has one, then the nest reading the panel.
    Value planned_launch(FnPlan::Group& pg, Slot& s, const detail::FusionGroup& fg, std::vector<const Value*> in,
                         const TypeP& type) {
        const kernel::Layout& l = *pg.layout;
        Value panel;
        if (l.pack) {
            const std::vector<const Value*> w{in[1]};
            Cached& pk = kernel_for(pg.pack, pg.dtype, w, [&] { return at_point(fg, pg.dtype, l).front(); });
            if (!pg.panel) pg.panel = tensor_type(Elem::Real, pk.k.output.axes);
            panel = launch(pg.pack, pk, w, pg.panel);
            in[1] = &panel;
        }
        Cached& k = kernel_for(s, pg.dtype, in, [&] { return at_point(fg, pg.dtype, l).back(); });
        return launch(s, k, in, type);
    }

    /// The steps of `f`'s lets as this executor runs them (fused or not): which are computed at
    /// their group's root, what a host let needs, and where each value is read for the last
    /// time, so that every value but the result is dropped in the call (`unread`: the
    /// parameters no let reads).
    std::vector<Step> steps(const core::Function& f, const detail::Partition& part, std::vector<int>& unread) const {
        const size_t n = f.body.size(), ids = (size_t)f.next_id();
        std::vector<Step> st(n);
        static const std::vector<int> none;
        auto reads = [&](size_t pos) -> const std::vector<int>& {  // a fused group reads its inputs at its root
            const int g = part.group_of[pos];
            if (g < 0 || !o.fuse) return f.body[pos].args;
            const detail::FusionGroup& fg = part.groups[(size_t)g];
            return fg.lets.back() == (int)pos ? fg.inputs : none;
        };
        std::vector<int> last(ids, -1);
        for (size_t pos = 0; pos < n; ++pos)
            for (int id : reads(pos))
                if (id >= 0 && (size_t)id < ids) last[(size_t)id] = (int)pos;
        for (size_t pos = 0; pos < n; ++pos) {
            const int g = part.group_of[pos];
            if (g >= 0) {
                const std::vector<int>& lets = part.groups[(size_t)g].lets;
                st[pos].skip = o.fuse && lets.back() != (int)pos;
                st[pos].member = (int)(std::find(lets.begin(), lets.end(), (int)pos) - lets.begin());
            }
        }
        const size_t arity = (size_t)f.arity();
        for (size_t id = 0; id < ids; ++id) {
            if ((int)id == f.result) continue;
            if (last[id] >= 0) st[(size_t)last[id]].release.push_back((int)id);
            else if (id < arity) unread.push_back((int)id);
            else if (!st[id - arity].skip) st[id - arity].release.push_back((int)id);  // a value no let reads
        }
        for (size_t pos = 0; pos < n; ++pos) {
            const core::Let& l = f.body[pos];
            Step& s = st[pos];
            const int g = part.group_of[pos];
            if (l.op == core::Op::Call || l.op == core::Op::Loop) s.callee = p.find(l.name);
            if (l.op == core::Op::Prim && g < 0) {
                s.dtype = r.storage_of(detail::site_of(f, l));
                s.random = random(l);
            }
            for (int id : l.args)
                s.take.push_back(id >= 0 && (size_t)id < ids && last[(size_t)id] == (int)pos && id != f.result &&
                                 std::count(l.args.begin(), l.args.end(), id) == 1);
        }
        // A tree only projections read: each projection moves its item out when no later one
        // reads the same item.
        std::vector<bool> only_gets(ids, true);
        std::map<std::pair<int, int64_t>, size_t> last_get;  // (tree, item) -> position
        for (size_t pos = 0; pos < n; ++pos) {
            const core::Let& l = f.body[pos];
            const bool get = l.op == core::Op::Get && l.args.size() == 1 && !l.ints.empty();
            for (int id : reads(pos))
                if (id >= 0 && (size_t)id < ids && !get) only_gets[(size_t)id] = false;
            if (get && l.args[0] >= 0 && (size_t)l.args[0] < ids) last_get[{l.args[0], l.ints[0]}] = pos;
        }
        for (const auto& [item, pos] : last_get)
            if (only_gets[(size_t)item.first] && item.first != f.result) st[pos].take[0] = true;
        return st;
    }

    /// The environment of the calls at depth `d`, with room for `n` values: kept from call to
    /// call (allocated once), every value in it empty outside a call (a call drops each value
    /// as it reads it for the last time; an error empties them all, call_values).
    std::vector<Value>& frame(int d, size_t n) {
        while ((int)frames.size() <= d) frames.emplace_back();
        std::vector<Value>& env = frames[(size_t)d];
        if (env.size() < n) env.resize(n);
        return env;
    }

    template <class Lower>
    Cached* cached(const std::string& sig, Lower lower) {
        auto& slot = cache[sig];
        if (!slot) slot = std::make_unique<Cached>(lower(), o);
        return slot.get();
    }

    /// The kernel `s` launches on `in`. An input is declared i64 if it is an integer, in the
    /// kernel's arithmetic type if it is a literal of the function (a constant of the kernel,
    /// rounded once from f64 to the type it is computed in, never to bf16), in its own type if
    /// its buffer is narrower than the storage type (its loads widen exactly: no copy), and in
    /// the storage type otherwise (converted at the kernel's edge). The choice depends only on
    /// the inputs' buffer types: kept in `s` for the next launch with the same ones.
    template <class Lower>
    Cached& kernel_for(Slot& s, DType t, const std::vector<const Value*>& in, Lower lower) {
        auto type_of = [](const Value* v) { return v->t ? (int)v->t->dtype() : -1; };
        auto same = [&](const Value* v, int d) { return type_of(v) == d; };
        if (s.last && s.last_types.size() == in.size() && std::equal(in.begin(), in.end(), s.last_types.begin(), same))
            return *s.last;
        s.last_types.clear();
        for (const Value* v : in) s.last_types.push_back(type_of(v));
        s.last = &choose(s, t, in, lower);
        return *s.last;
    }

    template <class Lower>
    Cached& choose(Slot& s, DType t, const std::vector<const Value*>& in, Lower lower) {
        if (!s.base) s.base = cached(s.sig, lower);
        Cached* base = s.base;
        auto rank = [](DType d) { return d == DType::F64 ? 2 : d == DType::F32 ? 1 : kernel::quantised(d) ? -1 : 0; };
        std::vector<DType> want;
        bool same = true;
        const std::vector<kernel::BufferType>& declared = base->k.inputs;
        for (size_t i = 0; i < declared.size() && i < in.size(); ++i) {
            DType d = declared[i].dtype;
            if (d != DType::I64 && in[i]->t) {
                const DType has = in[i]->t->dtype();
                if (i < s.literal.size() && s.literal[i]) d = kernel::arith_type(t);
                else if (has != DType::I64 && rank(has) < rank(t)) d = has;
            }
            same = same && d == declared[i].dtype;
            want.push_back(d);
        }
        if (same) return *base;
        for (const auto& [w, k] : s.variants)
            if (w == want) return *k;
        std::string key = s.sig + " | reads";
        for (DType d : want) key += std::string(" ") + kernel::dtype_name(d);
        Cached* k = cached(key, [&] {
            Kernel c = base->k;
            for (size_t i = 0; i < want.size(); ++i) c.inputs[i].dtype = want[i];
            return c;
        });
        s.variants.emplace_back(want, k);
        return *k;
    }

    /// Input `i` of a launch from `s`, `d`, in type `want`: a literal's conversion kept in `s`
    /// (a literal's value is the same at every call), any other's made in `held`.
    const kernel::Data& converted(Slot& s, size_t i, const kernel::Data& d, DType want) {
        if (i < s.literal.size() && s.literal[i]) {
            if (s.constants.size() < s.literal.size()) s.constants.resize(s.literal.size());  // once: launches point in
            auto& [from, to] = s.constants[i];
            if (!same_elements(from, d) || to.dtype() != want) {
                from = d;
                to = detail::convert(d, want);
            }
            return to;
        }
        held.push_back(detail::convert(d, want, &buffers));
        return held.back();
    }

    /// Runs `c` on `in` (each converted to the kernel's declared type at its edge, where it
    /// differs) into a buffer from the free lists, as a value of `type`; logs it at `s`'s site.
    Value launch(Slot& s, Cached& c, const std::vector<const Value*>& in, const TypeP& type) {
        const Kernel& k = c.k;
        if (in.size() != k.inputs.size()) throw Error({}, "kernel " + k.name + " takes " + std::to_string(k.inputs.size()) + " inputs");
        if (s.count < 0) {
            const int64_t n = type->numel();
            if (n > kMaxElements)
                throw Error({}, "a result of " + std::to_string(n) + " elements is too large for the kernel backend");
            s.count = n;
        }
        held.clear();
        held.reserve(in.size());  // `ptrs` points into it
        ptrs.clear();
        for (size_t i = 0; i < in.size(); ++i) {
            if (!in[i]->t) throw Error({}, "kernel " + k.name + ": input " + std::to_string(i) + " is not a tensor");
            const kernel::Data& d = *in[i]->t;
            const DType want = k.inputs[i].dtype;
            if ((want == DType::I64) != (d.dtype() == DType::I64))
                throw Error({}, "kernel " + k.name + ": input " + std::to_string(i) + " is " +
                                    kernel::dtype_name(d.dtype()) + ", declared " + kernel::dtype_name(want));
            ptrs.push_back(d.dtype() == want ? &d : &converted(s, i, d, want));
        }
        kernel::Data out(k.output.dtype, s.count, &buffers);
        run_kernel(c, ptrs, out, workers.get(), bufs);
        if (o.on_launch) o.on_launch(k, ptrs, out);
        held.clear();
        if (o.log_launches) log.emplace_back(&s.site, &k);
        if (!c.launched) {
            c.launched = true;
            first.push_back(&k);
        }
        return detail::tensor_value(type, std::move(out));
    }

    /// Runs `f` on the arguments in the first places of `env` (frame(depth + 1)), leaving it empty.
    Value call(const core::Function& f, std::vector<Value>& env) {
        struct Depth {
            int& d;
            ~Depth() { --d; }
        } guard{++depth};
        if (depth > kMaxCallDepth)
            throw Error({}, f.name + ": calls nested deeper than " + std::to_string(kMaxCallDepth));
        check_stack({}, "calls");
        FnPlan& fp = plan(f);
        if (env.size() < (size_t)f.next_id()) env.resize((size_t)f.next_id());
        for (size_t pos = 0; pos < f.body.size(); ++pos) {
            const Step& st = fp.steps[pos];
            if (st.skip) continue;
            const core::Let& l = f.body[pos];
            try {
                Value v = fp.part.group_of[pos] >= 0 ? group(fp, pos, env) : host(fp, pos, env);
                env[(size_t)l.id] = std::move(v);
            } catch (const Error& e) {
                std::string msg = e.what();
                if (msg.find("/%") == std::string::npos) msg = detail::site_of(f, l) + ": " + msg;
                throw Error(l.loc, msg);
            }
            for (int id : st.release) env[(size_t)id] = Value();
        }
        for (int id : fp.unread) env[(size_t)id] = Value();
        return std::move(env[(size_t)f.result]);
    }

    /// The launch of the group of the let at `pos`: at its root (fused), or of that member alone.
    Value group(FnPlan& fp, size_t pos, std::vector<Value>& env) {
        const core::Function& f = *fp.f;
        const int g = fp.part.group_of[pos];
        const detail::FusionGroup& fg = fp.part.groups[(size_t)g];
        FnPlan::Group& pg = fp.groups[(size_t)g];
        const core::Let& l = f.body[pos];
        values.clear();
        if (o.fuse) {
            for (int id : fg.inputs) values.push_back(&env[(size_t)id]);
            if (pg.layout) {
                unfused += (int64_t)fg.lets.size();
                return planned_launch(pg, pg.fused, fg, values, l.type);
            }
            Cached& k = kernel_for(pg.fused, pg.dtype, values, [&] {
                return fg.elementwise ? kernel::lower_group(fg.group, pg.dtype)
                                      : kernel::lower(fg.node, pg.dtype, lanes(pg.dtype));
            });
            unfused += (int64_t)fg.lets.size();
            return launch(pg.fused, k, values, l.type);
        }
        Slot& s = pg.members[(size_t)fp.steps[pos].member];
        for (int id : l.args) values.push_back(&env[(size_t)id]);
        if (pg.layout && fg.lets.size() == 1) {  // a group of several members is planned fused only
            ++unfused;
            return planned_launch(pg, s, fg, values, l.type);
        }
        Cached& k = kernel_for(s, pg.dtype, values,
                               [&] { return kernel::lower(detail::node_of(f, l), pg.dtype, lanes(pg.dtype)); });
        ++unfused;
        return launch(s, k, values, l.type);
    }

    /// The let at `pos`, evaluated on the host: its arguments moved out of `env` where it reads
    /// them for the last time.
    Value host(FnPlan& fp, size_t pos, std::vector<Value>& env) {
        const core::Function& f = *fp.f;
        const core::Let& l = f.body[pos];
        Step& st = fp.steps[pos];
        auto pass = [&](size_t i) -> Value {
            Value& v = env[(size_t)l.args[i]];
            return st.take[i] ? std::move(v) : v;
        };
        switch (l.op) {
        case core::Op::Lit:
            if (!st.literal) st.literal = literal(l);
            return *st.literal;
        case core::Op::Tuple:
        case core::Op::Record: {
            Value v;
            v.type = l.type;
            v.items.reserve(l.args.size());
            for (size_t i = 0; i < l.args.size(); ++i) v.items.push_back(pass(i));
            return v;
        }
        case core::Op::Get: {
            if (l.args.empty() || l.ints.empty() || l.ints[0] < 0 ||
                (size_t)l.ints[0] >= env[(size_t)l.args[0]].items.size())
                throw Error({}, "a projection out of range");
            Value& item = env[(size_t)l.args[0]].items[(size_t)l.ints[0]];
            return st.take[0] ? std::move(item) : item;
        }
        case core::Op::Call: {
            if (!st.callee) throw Error({}, "no function '" + l.name + "'");
            std::vector<Value>& args = frame(depth + 1, l.args.size());
            for (size_t i = 0; i < l.args.size(); ++i) args[i] = pass(i);
            return call(*st.callee, args);
        }
        case core::Op::Loop: return loop(fp, pos, env);
        case core::Op::Prim: {
            detail::HostContext c;
            c.seed = o.seed;
            c.train = o.train;
            if (st.random) {
                c.key = l.text;
                for (const auto& s : ctx) c.key += "[" + s + "]";
            }
            c.dtype = st.dtype;
            c.types = &types;
            c.pool = &buffers;
            values.clear();
            for (int id : l.args) values.push_back(&env[(size_t)id]);
            return detail::host_prim(l, values, c);
        }
        }
        throw Error({}, "an unknown let");
    }

    /// A real literal as a 0-d f64 buffer (the decimal rounded once); a kernel reads it in its
    /// arithmetic type (kernel_for).
    Value literal(const core::Let& l) {
        ref::Real x(256);
        if (l.text == "pi") mpfr_const_pi(x.get(), MPFR_RNDN);
        else if (mpfr_set_str(x.get(), l.text.c_str(), 10, MPFR_RNDN) != 0) throw Error({}, "bad literal '" + l.text + "'");
        return detail::tensor_value(l.type, kernel::Data::from_reals(DType::F64, {x.to_double()}));
    }

    /// fold/scan as the reference runs it (ref/interp.cpp, Interp::loop); the carry moved from
    /// step to step.
    Value loop(FnPlan& fp, size_t pos, std::vector<Value>& env) {
        const core::Let& l = fp.f->body[pos];
        const Step& st = fp.steps[pos];
        if (l.ints.size() < 4) throw Error({}, "a malformed fold");
        const int64_t s = l.ints[0], rev = l.ints[1], ys = l.ints[2], L = l.ints[3];
        const core::Function* f = st.callee;
        if (!f) throw Error({}, "no function '" + l.name + "'");
        if (s < 0 || s >= (int64_t)l.args.size()) throw Error({}, "a malformed fold");
        auto arg = [&](size_t j) -> Value& { return env[(size_t)l.args[j]]; };
        Value carry = st.take[(size_t)s] ? std::move(arg((size_t)s)) : arg((size_t)s);
        std::vector<Value> out(ys ? (size_t)L : 0);
        std::vector<Value>& args = frame(depth + 1, l.args.size());
        for (int64_t k = 0; k < L; ++k) {
            const int64_t i = rev ? L - 1 - k : k;
            for (int64_t j = 0; j < s; ++j) args[(size_t)j] = detail::slice_first(arg((size_t)j), i, types);
            if (ys == 3) out[(size_t)i] = carry;
            args[(size_t)s] = std::move(carry);
            for (size_t j = (size_t)s + 1; j < l.args.size(); ++j) args[j] = arg(j);
            ctx.push_back(std::to_string(i));
            Value res = call(*f, args);
            ctx.pop_back();
            if (ys == 2) {
                if (res.items.size() != 2) throw Error({}, "a scan step did not return (carry, y)");
                carry = std::move(res.items[0]);
                out[(size_t)i] = std::move(res.items[1]);
            } else {
                carry = std::move(res);
            }
            if (ys == 1) out[(size_t)i] = carry;
        }
        if (!ys) return carry;
        Value v;
        v.type = l.type;
        v.items.push_back(std::move(carry));
        v.items.push_back(detail::stack_first(out, types, &buffers));
        return v;
    }

    // ---- the realization's checks ----

    [[noreturn]] void refuse(const std::vector<std::string>& why) const {
        std::string msg = "E7002: the kernel backend refuses realization " + r.spelling + ": ";
        for (size_t i = 0; i < why.size(); ++i) msg += (i ? "; " : "") + why[i];
        throw Error({}, msg);
    }

    /// Every site of every function reachable from the entry.
    std::map<std::string, SiteInfo> sites(std::set<std::string>& reached) {
        std::map<std::string, SiteInfo> out;
        std::vector<const core::Function*> todo;
        auto visit = [&](const std::string& name) {
            const core::Function* f = p.find(name);
            if (f && reached.insert(name).second) todo.push_back(f);
        };
        visit(p.entry);
        while (!todo.empty()) {
            const core::Function& f = *todo.back();
            todo.pop_back();
            const FnPlan& fp = plan(f);
            for (size_t pos = 0; pos < f.body.size(); ++pos) {
                const core::Let& l = f.body[pos];
                if (l.op == core::Op::Call || l.op == core::Op::Loop) visit(l.name);
                SiteInfo s;
                const int g = fp.part.group_of[pos];
                if (g >= 0) {
                    const auto& fg = fp.part.groups[(size_t)g];
                    s.kind = fg.named() == (int)pos ? SiteInfo::Root : SiteInfo::Member;
                    s.epilogue = fg.epilogue && s.kind == SiteInfo::Member;
                    s.prim = l.name;
                    s.root = fp.groups[(size_t)g].site;
                } else if (random(l)) {
                    s.kind = SiteInfo::Random;
                    s.prim = l.name;
                } else {
                    s.prim = l.op == core::Op::Prim ? l.name + ", " + what_is(l) : what_is(l);
                }
                out[detail::site_of(f, l)] = s;
            }
        }
        return out;
    }

    void check() {
        if (!p.find(p.entry)) throw Error({}, "the program has no entry function '" + p.entry + "'");
        std::vector<std::string> why;
        if (r.order.kind == Order::Interleaved)
            why.push_back("order interleaved(" + std::to_string(r.order.width) +
                          ") reassociates the contractions' sums, and the kernel backend has no such kernels");
        std::set<std::string> reached;
        const auto all = sites(reached);
        std::vector<std::string> plan_why;
        auto located = [&](const std::string& key, const std::string& site) -> const SiteInfo* {
            std::vector<std::string>& why_here = key == "layout" ? plan_why : why;
            auto it = all.find(site);
            if (it != all.end()) {
                const SiteInfo& s = it->second;
                if (s.kind == SiteInfo::Member && !(s.epilogue && key == "storage"))
                    why_here.push_back(key + " names " + site + ", which is fused into the group rooted at " + s.root +
                                  " (a realization types a fusion group by its root)");
                else if (s.kind == SiteInfo::Host)
                    why_here.push_back(key + " names " + site + ", " + s.prim + " evaluated on the host, not a kernel launch");
                return &s;
            }
            const std::string fn = site.substr(0, site.rfind("/%"));
            if (!p.find(fn)) why_here.push_back(key + " names " + site + ", but the program has no function " + fn);
            else if (!reached.count(fn)) why_here.push_back(key + " names " + site + ", but " + fn + " is not reachable from the entry " + p.entry);
            else why_here.push_back(key + " names " + site + ", but " + fn + " has no let %" + site.substr(site.rfind("/%") + 2));
            return nullptr;
        };
        for (const auto& [site, t] : r.storage) located("storage", site);
        for (const auto& [site, t] : r.accum) {
            const SiteInfo* s = located("accum", site);
            if (!s || s->kind == SiteInfo::Member || s->kind == SiteInfo::Host) continue;
            if (!sums(s->prim)) {
                why.push_back("accum names " + site + (std::string("aeiou").find(s->prim[0]) == std::string::npos ? ", a " : ", an ") +
                              s->prim + " that sums nothing");
                continue;
            }
            const DType st = r.storage_of(site);
            if (t != kernel::arith_type(st))
                why.push_back(std::string("site ") + site + " declares accumulation in " + kernel::dtype_name(t) + " over " +
                              kernel::dtype_name(st) + " storage (kernels sum in their storage's arithmetic type, " +
                              kernel::dtype_name(kernel::arith_type(st)) + ")");
        }
        std::map<std::string, const core::ParamSpec*> leaves;
        for (const core::ParamSpec& ps : p.params) leaves[ps.path] = &ps;
        for (const auto* key : {"params", "quant"}) {
            for (const auto& [path, t] : key[0] == 'p' ? r.params : r.quant) {
                const std::string at = std::string(key) + " names " + path;
                auto leaf = leaves.find(path);
                if (leaf != leaves.end()) {
                    const std::vector<Axis>& axes = leaf->second->type->axes;
                    if (kernel::quantised(t) && (axes.empty() || axes.back().size % kernel::kQuantBlock))
                        why.push_back(at + " (" + to_string(*leaf->second->type) + "), whose last axis is not a multiple of " +
                                      std::to_string(kernel::kQuantBlock) + " (the " + kernel::dtype_name(t) +
                                      " blocks run along it)");
                    continue;
                }
                if (leaves.empty()) {
                    why.push_back(at + ", but the entry " + p.entry + " has no parameters");
                    continue;
                }
                auto below = leaves.lower_bound(path + ".");
                if (below != leaves.end() && below->first.rfind(path + ".", 0) == 0)
                    why.push_back(at + ", a subtree (" + below->first + ", ...); it keys leaves");
                else
                    why.push_back(at + ", which is not a parameter of " + p.entry);
            }
        }
        if (!why.empty()) refuse(why);
        for (const auto& [site, point] : o.plan.layout) {
            const SiteInfo* s = located("layout", site);
            if (s && s->kind == SiteInfo::Root) check_point(site, point, plan_why);
        }
        if (!plan_why.empty()) {
            std::string msg = "E7002: plan " + o.plan.spelling + ": ";
            for (size_t i = 0; i < plan_why.size(); ++i) msg += (i ? "; " : "") + plan_why[i];
            throw Error({}, msg);
        }
        for (auto& [f, fp] : plans)
            for (FnPlan::Group& pg : fp.groups) apply_plan(pg);
    }

    /// Why the contraction at body position `pos` of `f` cannot take the bias epilogue ("" when
    /// it can, with the bits of the product's kernel then the add's): no add reads it as
    /// detail::bias_add_of says; the builder refuses a bias on it, or the add's other operand is
    /// not a vector over the product's columns; the realization stores the add in another type
    /// than the product; or, on storage narrower than its arithmetic type (bf16), the add is
    /// fused with other elementwise lets by default, where the sum stays in the arithmetic type
    /// (the epilogue stores it, rounded).
    std::string epilogue_refusal(const core::Function& f, int pos) const {
        const std::optional<detail::BiasAdd> b = detail::bias_add_of(f, pos);
        if (!b)
            return "an epilogue (bias) needs a dot, matmul or ein whose value only an add reads, as its first operand "
                   "(dot(x, w) + b)";
        const core::Let& add = f.body[(size_t)b->add];
        const std::string add_site = detail::site_of(f, add);
        const DType t = r.storage_of(detail::site_of(f, f.body[(size_t)pos]));
        if (r.storage_of(add_site) != t)
            return std::string("the add ") + add_site + " is stored in " + kernel::dtype_name(r.storage_of(add_site)) +
                   " and the product in " + kernel::dtype_name(t) + ": an epilogue computes both in one type";
        std::vector<Axis> columns;
        try {
            kernel::Layout bias;
            bias.bias = true;
            columns = kernel::lower_layout(detail::node_of(f, f.body[(size_t)pos]), t, bias).back().inputs.back().axes;
        } catch (const Error& e) {
            return e.what();
        }
        const TypeP bias = f.type_of(b->bias);
        if (!bias || !bias->is_real_tensor() || bias->axes != columns)
            return "the epilogue's bias is " + (bias ? to_string(*bias) : std::string("?")) +
                   ", not a vector over the product's columns " + to_string(*tensor_type(Elem::Real, columns));
        if (kernel::arith_type(t) != t) {
            const detail::Partition plain = detail::partition(f);
            const detail::FusionGroup& g = plain.groups[(size_t)plain.group_of[(size_t)b->add]];
            if (g.lets.size() > 1)
                return std::string("on ") + kernel::dtype_name(t) + " storage the add " + add_site + " is fused with " +
                       std::to_string(g.lets.size() - 1) + " other elementwise let(s) into " +
                       detail::site_of(f, f.body[(size_t)g.lets.back()]) + ", which keeps the sum in " +
                       kernel::dtype_name(kernel::arith_type(t)) + "; the epilogue would store it rounded";
        }
        return "";
    }

    /// Checks the plan's point for the group rooted at `site` against its nest, the backend and
    /// the machine, and keeps it with its lanes resolved (unstated: the run's width where the
    /// point admits it, else 1).
    void check_point(const std::string& site, kernel::Layout l, std::vector<std::string>& why) {
        const core::Function& f = *p.find(site.substr(0, site.rfind("/%")));
        const FnPlan& fp = plan(f);
        size_t pos = 0;
        while (detail::site_of(f, f.body[pos]) != site) ++pos;
        const detail::FusionGroup& fg = fp.part.groups[(size_t)fp.part.group_of[pos]];
        const DType t = fp.groups[(size_t)fp.part.group_of[pos]].dtype;
        const std::string at = "layout names " + site;
        if (fg.elementwise && kernel::shapes(l)) {
            why.push_back(at + ", an elementwise group: its only choice is a split");
            return;
        }
        if (l.bias) {
            const std::string no = epilogue_refusal(f, (int)pos);
            if (!no.empty()) {
                why.push_back(at + ": " + no);
                return;
            }
        }
        const bool machine = o.backend != Backend::Kernel;
        if (l.lanes > 1 && machine && l.lanes != kernel::native_lanes(t) && l.lanes != kernel::register_lanes(t))
            why.push_back(at + ": lanes " + std::to_string(l.lanes) + " are not 1 or the register's width for " +
                          kernel::dtype_name(t) + " (" + std::to_string(kernel::native_lanes(t)) + " as a run's default, " +
                          std::to_string(kernel::register_lanes(t)) + " in full)");
        if (l.split_workers > 1 && machine && l.split_workers != o.threads && l.split_workers != o.threads / 2)
            why.push_back(at + ": a split over " + std::to_string(l.split_workers) + " workers, where the machine's count is " +
                          std::to_string(o.threads) + " (--threads) and half of it " + std::to_string(o.threads / 2) +
                          " (condition 5)");
        std::vector<Kernel> ks;
        const bool stated = l.lanes != 0;
        for (int lanes : stated ? std::vector<int>{l.lanes} : std::vector<int>{this->lanes(t), 1}) {
            l.lanes = lanes;
            try {
                ks = at_point(fg, t, l);
                break;
            } catch (const Error& e) {
                if (stated || lanes == 1) {
                    why.push_back(at + ": " + e.what());
                    return;
                }
            }
        }
        if (l.split_workers > 1 && !kernel::split_loop(ks.back()))
            why.push_back(at + ": a split at depth " + std::to_string(l.split_depth) + " of kernel " + ks.back().name +
                          ", whose loop there is not parallel (condition 8)");
        planned[site] = l;
    }
};

const char* backend_name(Backend b) {
    switch (b) {
    case Backend::Kernel: return "kernel";
    case Backend::Native: return "native";
    case Backend::Cc: return "cc";
    }
    return "?";
}

Backend parse_backend(const std::string& name) {
    for (Backend b : {Backend::Kernel, Backend::Native, Backend::Cc})
        if (name == backend_name(b)) return b;
    throw Error({}, "--backend " + name + ": the kernel backends are kernel, native and cc");
}

kernel::NativeCode compile_native(Backend b, const Kernel& k, std::string* note) {
    if (b == Backend::Cc) return kernel::compile_cc(k, kernel::CcOptions::from_env(), note);
    if (b == Backend::Native) return kernel::compile_llvm(k);
    throw Error({}, std::string("kernel ") + k.name + ": the " + backend_name(b) + " backend is not built");
}

Executor::Executor(const core::Program& p, Realization r, ExecOptions o) : impl_(std::make_unique<Impl>(p, std::move(r), o)) {
    if (o.threads < 1) throw Error({}, "threads must be at least 1, not " + std::to_string(o.threads));
    if (o.lanes < 0) throw Error({}, "lanes must be 0 (each type's width) or more, not " + std::to_string(o.lanes));
    impl_->check();
    if (o.backend != Backend::Kernel && o.threads > 1) impl_->workers = std::make_unique<kernel::Pool>(o.threads);
}

Executor::~Executor() = default;

std::map<std::string, Executor::Nest> Executor::nests() {
    std::map<std::string, Nest> out;
    std::set<std::string> reached;
    for (const auto& [site, s] : impl_->sites(reached)) {
        if (s.kind != SiteInfo::Root || (!kernel::is_contraction(s.prim) && s.prim != "softmax"))
            continue;
        const core::Function& f = *impl_->p.find(site.substr(0, site.rfind("/%")));
        for (size_t pos = 0; pos < f.body.size(); ++pos) {
            if (detail::site_of(f, f.body[pos]) != site) continue;
            Nest& n = out[site];
            n.node = detail::node_of(f, f.body[pos]);
            n.dtype = impl_->r.storage_of(site);
            if (impl_->epilogue_refusal(f, (int)pos).empty())
                n.bias_add = detail::node_of(f, f.body[(size_t)detail::bias_add_of(f, (int)pos)->add]);
        }
    }
    return out;
}

std::vector<Value> Executor::convert_args(const std::string& fn, const std::vector<ref::Value>& args) const {
    const core::Function* f = impl_->p.find(fn);
    if (!f) throw Error({}, "no function '" + fn + "'");
    if ((int)args.size() != f->arity())
        throw Error({}, fn + " takes " + std::to_string(f->arity()) + " arguments, given " + std::to_string(args.size()));
    std::vector<Value> out;
    for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].type || !same_type(*args[i].type, *f->param_types[i]))
            throw Error({}, fn + ": argument " + f->param_names[i] + " is " + (args[i].type ? to_string(*args[i].type) : "?") +
                                ", expected " + to_string(*f->param_types[i]));
        const bool tree = i == 0 && impl_->p.params_type && same_type(*args[i].type, *impl_->p.params_type);
        std::map<std::string, DType> at_rest;
        if (tree) {
            at_rest = impl_->r.params;
            at_rest.insert(impl_->r.quant.begin(), impl_->r.quant.end());
        }
        out.push_back(detail::from_ref(args[i], impl_->r.default_type, at_rest, "", &impl_->o.blocks));
    }
    return out;
}

Value Executor::call_values(const std::string& fn, const std::vector<Value>& args) {
    const core::Function* f = impl_->p.find(fn);
    if (!f) throw Error({}, "no function '" + fn + "'");
    if ((int)args.size() != f->arity())
        throw Error({}, fn + " takes " + std::to_string(f->arity()) + " arguments, given " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
        if (!args[i].type || !same_type(*args[i].type, *f->param_types[i]))
            throw Error({}, fn + ": argument " + f->param_names[i] + " is " + (args[i].type ? to_string(*args[i].type) : "?") +
                                ", expected " + to_string(*f->param_types[i]));
    impl_->ctx.clear();
    impl_->depth = 0;
    try {
        std::vector<Value>& env = impl_->frame(1, args.size());
        std::copy(args.begin(), args.end(), env.begin());
        return impl_->call(*f, env);
    } catch (...) {
        for (std::vector<Value>& env : impl_->frames) env.clear();  // what the failed call left
        throw;
    }
}

Value Executor::call(const std::string& fn, const std::vector<ref::Value>& args) { return call_values(fn, convert_args(fn, args)); }

const std::vector<Launch>& Executor::launches() const {
    for (size_t i = impl_->launches.size(); i < impl_->log.size(); ++i)
        impl_->launches.push_back({*impl_->log[i].first, impl_->log[i].second});
    return impl_->launches;
}

int64_t Executor::unfused_launches() const { return impl_->unfused; }

std::vector<const kernel::Kernel*> Executor::kernels() const { return impl_->first; }

const kernel::BufferPool& Executor::buffers() const { return impl_->buffers; }

} // namespace presk::realize
