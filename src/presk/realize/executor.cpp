// The kernel backend's executor: the realization checked against the program (E7002), the
// host program evaluated over runtime values as the reference interpreter evaluates PSK-Core,
// and one kernel launch per fusion group, its kernel lowered on first use and cached by
// signature (docs/presk.md, "The kernel backend").
#include "realize/executor.h"

#include <mpfr.h>

#include <algorithm>
#include <optional>
#include <set>
#include <variant>

#include "core/prims.h"
#include "kernel/cc.h"
#include "kernel/launch.h"
#include "kernel/llvm_jit.h"
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
/// runs a range of.
struct Cached {
    Kernel k;
    Code code;
    kernel::LaunchPlan plan;
    Cached(Kernel kernel, const ExecOptions& o) : k(std::move(kernel)), code(compile(o, k)), plan(kernel::plan_launch(k, o.split_work)) {}
};

namespace {

/// Runs `c` on `in` into `out` (of the output's type and count, shared with no other Data):
/// every launch of every backend goes through here.
void run_kernel(const Cached& c, const std::vector<const kernel::Data*>& in, kernel::Data& out, kernel::Pool* workers) {
    if (const auto* interp = std::get_if<kernel::Compiled>(&c.code)) {
        interp->run(in, out);
        return;
    }
    const kernel::NativeCode& code = std::get<kernel::NativeCode>(c.code);
    kernel::check_buffers(c.k, in, out);
    std::vector<void*> bufs;
    for (const kernel::Data* d : in) bufs.push_back(const_cast<void*>(d->raw()));  // a kernel writes only its output
    bufs.push_back(out.raw());
    kernel::launch(c.k, c.plan, code, bufs.data(), workers);
}

} // namespace

/// Where a kernel is launched from (a fused group, or one member of it run alone): its kernel,
/// lowered on first use, and the variants that declare some inputs in other types.
struct Slot {
    std::string sig;                 // kernel::signature of the primitive or group
    const Cached* base = nullptr;    // every real input declared in the storage type
    std::vector<bool> literal;       // per input: a literal of the function
    std::vector<std::pair<std::vector<DType>, const Cached*>> variants;
};

/// A function's partition with what the executor adds per group: its site, storage type and
/// launch slots (fused, and one per member for the runs without fusion).
struct FnPlan {
    const core::Function* f = nullptr;
    detail::Partition part;
    struct Group {
        std::string site;
        DType dtype = DType::F64;
        Slot fused;
        std::vector<Slot> members;
    };
    std::vector<Group> groups;
};

struct Executor::Impl {
    const core::Program& p;
    Realization r;
    ExecOptions o;
    std::map<std::string, FnPlan> plans;
    std::map<std::string, std::unique_ptr<Cached>> cache;
    std::vector<Launch> launches;
    std::vector<const Kernel*> first;  // distinct kernels in first-launch order
    std::set<const Kernel*> seen;
    int64_t unfused = 0;
    std::vector<std::string> ctx;  // the enclosing fold steps, for random keys
    int depth = 0;
    kernel::BufferPool buffers;  // the launches' outputs
    std::unique_ptr<kernel::Pool> workers;  // machine-code launches at threads > 1 (divided kernels)

    Impl(const core::Program& prog, Realization real, ExecOptions opt) : p(prog), r(std::move(real)), o(opt) {}

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
        auto it = plans.find(f.name);
        if (it != plans.end()) return it->second;
        FnPlan fp;
        fp.f = &f;
        fp.part = detail::partition(f);
        for (const detail::FusionGroup& g : fp.part.groups) {
            FnPlan::Group pg;
            pg.site = detail::site_of(f, f.body[(size_t)g.lets.back()]);
            pg.dtype = r.storage_of(pg.site);
            pg.fused.sig = g.elementwise ? kernel::signature(g.group, pg.dtype) : kernel::signature(g.node, pg.dtype);
            pg.fused.literal = g.literal;
            for (int pos : g.lets) {
                Slot m;
                m.sig = kernel::signature(detail::node_of(f, f.body[(size_t)pos]), pg.dtype);
                m.literal = detail::literal_args(f, f.body[(size_t)pos].args);
                pg.members.push_back(std::move(m));
            }
            fp.groups.push_back(std::move(pg));
        }
        return plans.emplace(f.name, std::move(fp)).first->second;
    }

    template <class Lower>
    const Cached* cached(const std::string& sig, Lower lower) {
        auto& slot = cache[sig];
        if (!slot) slot = std::make_unique<Cached>(lower(), o);
        return slot.get();
    }

    /// The kernel `s` launches on `in`. An input is declared i64 if it is an integer, in the
    /// kernel's arithmetic type if it is a literal of the function (a constant of the kernel,
    /// rounded once from f64 to the type it is computed in, never to bf16), in its own type if
    /// its buffer is narrower than the storage type (its loads widen exactly: no copy), and in
    /// the storage type otherwise (converted at the kernel's edge).
    template <class Lower>
    const Cached* kernel_for(Slot& s, DType t, const std::vector<const Value*>& in, Lower lower) {
        if (!s.base) s.base = cached(s.sig, lower);
        auto rank = [](DType d) { return d == DType::F64 ? 2 : d == DType::F32 ? 1 : 0; };
        std::vector<DType> want;
        bool same = true;
        const std::vector<kernel::BufferType>& declared = s.base->k.inputs;
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
        if (same) return s.base;
        for (const auto& [w, k] : s.variants)
            if (w == want) return k;
        std::string key = s.sig + " | reads";
        for (DType d : want) key += std::string(" ") + kernel::dtype_name(d);
        const Cached* k = cached(key, [&] {
            Kernel c = s.base->k;
            for (size_t i = 0; i < want.size(); ++i) c.inputs[i].dtype = want[i];
            return c;
        });
        s.variants.emplace_back(want, k);
        return k;
    }

    /// Runs `c` on `in` (each converted to the kernel's declared type at its edge).
    Value launch(const Cached& c, const std::string& site, const std::vector<const Value*>& in, const TypeP& type) {
        const Kernel& k = c.k;
        if (in.size() != k.inputs.size()) throw Error({}, "kernel " + k.name + " takes " + std::to_string(k.inputs.size()) + " inputs");
        if (type->numel() > kMaxElements)
            throw Error({}, "a result of " + std::to_string(type->numel()) + " elements is too large for the kernel backend");
        std::vector<kernel::Data> held;
        held.reserve(in.size());
        std::vector<const kernel::Data*> ptrs;
        for (size_t i = 0; i < in.size(); ++i) {
            if (!in[i]->t) throw Error({}, "kernel " + k.name + ": input " + std::to_string(i) + " is not a tensor");
            const DType want = k.inputs[i].dtype;
            if ((want == DType::I64) != (in[i]->t->dtype() == DType::I64))
                throw Error({}, "kernel " + k.name + ": input " + std::to_string(i) + " is " +
                                    kernel::dtype_name(in[i]->t->dtype()) + ", declared " + kernel::dtype_name(want));
            held.push_back(detail::convert(*in[i]->t, want, &buffers));
            ptrs.push_back(&held.back());
        }
        kernel::Data out(k.output.dtype, type->numel(), &buffers);
        run_kernel(c, ptrs, out, workers.get());
        if (o.on_launch) o.on_launch(k, ptrs, out);
        launches.push_back({site, &k});
        if (seen.insert(&k).second) first.push_back(&k);
        return detail::tensor_value(type, std::move(out));
    }

    Value call(const core::Function& f, std::vector<Value> args) {
        struct Depth {
            int& d;
            ~Depth() { --d; }
        } guard{++depth};
        if (depth > 1000) throw Error({}, f.name + ": calls nested too deeply");
        FnPlan& fp = plan(f);
        std::vector<Value> env(std::move(args));
        env.resize((size_t)f.next_id());
        for (size_t pos = 0; pos < f.body.size(); ++pos) {
            const core::Let& l = f.body[pos];
            const int g = fp.part.group_of[pos];
            if (g >= 0 && o.fuse && fp.part.groups[(size_t)g].lets.back() != (int)pos) continue;  // computed at its root
            std::vector<const Value*> a;
            for (int id : l.args) a.push_back(&env[(size_t)id]);
            try {
                if (g >= 0) env[(size_t)l.id] = group(fp, g, pos, env);
                else env[(size_t)l.id] = host(f, l, a);
            } catch (const Error& e) {
                std::string msg = e.what();
                if (msg.find("/%") == std::string::npos) msg = detail::site_of(f, l) + ": " + msg;
                throw Error(l.loc, msg);
            }
        }
        return env[(size_t)f.result];
    }

    /// The launch of group `g` at its root (fused), or of its member at `pos` alone.
    Value group(FnPlan& fp, int g, size_t pos, const std::vector<Value>& env) {
        const core::Function& f = *fp.f;
        const detail::FusionGroup& fg = fp.part.groups[(size_t)g];
        FnPlan::Group& pg = fp.groups[(size_t)g];
        const core::Let& l = f.body[pos];
        if (o.fuse) {
            std::vector<const Value*> in;
            for (int id : fg.inputs) in.push_back(&env[(size_t)id]);
            const Cached* k = kernel_for(pg.fused, pg.dtype, in, [&] {
                return fg.elementwise ? kernel::lower_group(fg.group, pg.dtype)
                                      : kernel::lower(fg.node, pg.dtype, lanes(pg.dtype));
            });
            unfused += (int64_t)fg.lets.size();
            return launch(*k, pg.site, in, l.type);
        }
        const size_t m = (size_t)(std::find(fg.lets.begin(), fg.lets.end(), (int)pos) - fg.lets.begin());
        std::vector<const Value*> in;
        for (int id : l.args) in.push_back(&env[(size_t)id]);
        const Cached* k = kernel_for(pg.members[m], pg.dtype, in,
                                     [&] { return kernel::lower(detail::node_of(f, l), pg.dtype, lanes(pg.dtype)); });
        ++unfused;
        return launch(*k, detail::site_of(f, l), in, l.type);
    }

    Value host(const core::Function& f, const core::Let& l, const std::vector<const Value*>& a) {
        switch (l.op) {
        case core::Op::Lit: return literal(l);
        case core::Op::Tuple:
        case core::Op::Record: {
            Value v;
            v.type = l.type;
            for (const Value* x : a) v.items.push_back(*x);
            return v;
        }
        case core::Op::Get:
            if (l.ints.empty() || l.ints[0] < 0 || (size_t)l.ints[0] >= a.at(0)->items.size())
                throw Error({}, "a projection out of range");
            return a[0]->items[(size_t)l.ints[0]];
        case core::Op::Call: {
            const core::Function* g = p.find(l.name);
            if (!g) throw Error({}, "no function '" + l.name + "'");
            std::vector<Value> args;
            for (const Value* x : a) args.push_back(*x);
            return call(*g, std::move(args));
        }
        case core::Op::Loop: return loop(l, a);
        case core::Op::Prim: {
            detail::HostContext c;
            c.seed = o.seed;
            c.train = o.train;
            c.key = l.text;
            for (const auto& s : ctx) c.key += "[" + s + "]";
            c.dtype = r.storage_of(detail::site_of(f, l));
            return detail::host_prim(l, a, c);
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

    /// fold/scan as the reference runs it (ref/interp.cpp, Interp::loop).
    Value loop(const core::Let& l, const std::vector<const Value*>& a) {
        if (l.ints.size() < 4) throw Error({}, "a malformed fold");
        const int64_t s = l.ints[0], rev = l.ints[1], ys = l.ints[2], L = l.ints[3];
        const core::Function* f = p.find(l.name);
        if (!f) throw Error({}, "no function '" + l.name + "'");
        if (s < 0 || s >= (int64_t)a.size()) throw Error({}, "a malformed fold");
        Value carry = *a[(size_t)s];
        std::vector<Value> out(ys ? (size_t)L : 0);
        for (int64_t k = 0; k < L; ++k) {
            const int64_t i = rev ? L - 1 - k : k;
            std::vector<Value> args;
            for (int64_t j = 0; j < s; ++j) args.push_back(detail::slice_first(*a[(size_t)j], i));
            args.push_back(carry);
            for (size_t j = (size_t)s + 1; j < a.size(); ++j) args.push_back(*a[j]);
            ctx.push_back(std::to_string(i));
            Value res = call(*f, std::move(args));
            ctx.pop_back();
            if (ys == 3) out[(size_t)i] = carry;
            if (ys == 2) {
                if (res.items.size() != 2) throw Error({}, "a scan step did not return (carry, y)");
                carry = res.items[0];
                out[(size_t)i] = res.items[1];
            } else {
                carry = res;
            }
            if (ys == 1) out[(size_t)i] = carry;
        }
        if (!ys) return carry;
        Value v;
        v.type = l.type;
        v.items = {carry, detail::stack_first(out)};
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
                    s.kind = fg.lets.back() == (int)pos ? SiteInfo::Root : SiteInfo::Member;
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
        auto located = [&](const std::string& key, const std::string& site) -> const SiteInfo* {
            auto it = all.find(site);
            if (it != all.end()) {
                const SiteInfo& s = it->second;
                if (s.kind == SiteInfo::Member)
                    why.push_back(key + " names " + site + ", which is fused into the group rooted at " + s.root +
                                  " (a realization types a fusion group by its root)");
                else if (s.kind == SiteInfo::Host)
                    why.push_back(key + " names " + site + ", " + s.prim + " evaluated on the host, not a kernel launch");
                return &s;
            }
            const std::string fn = site.substr(0, site.rfind("/%"));
            if (!p.find(fn)) why.push_back(key + " names " + site + ", but the program has no function " + fn);
            else if (!reached.count(fn)) why.push_back(key + " names " + site + ", but " + fn + " is not reachable from the entry " + p.entry);
            else why.push_back(key + " names " + site + ", but " + fn + " has no let %" + site.substr(site.rfind("/%") + 2));
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
        if (!r.params.empty()) {
            std::set<std::string> leaves;
            for (const core::ParamSpec& ps : p.params) leaves.insert(ps.path);
            for (const auto& [path, t] : r.params) {
                if (leaves.count(path)) continue;
                if (leaves.empty()) {
                    why.push_back("params names " + path + ", but the entry " + p.entry + " has no parameters");
                    continue;
                }
                auto below = leaves.lower_bound(path + ".");
                if (below != leaves.end() && below->rfind(path + ".", 0) == 0)
                    why.push_back("params names " + path + ", a subtree (" + *below + ", ...); it keys leaves");
                else
                    why.push_back("params names " + path + ", which is not a parameter of " + p.entry);
            }
        }
        if (!why.empty()) refuse(why);
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
        out.push_back(detail::from_ref(args[i], impl_->r.default_type, tree ? impl_->r.params : std::map<std::string, DType>{}, ""));
    }
    return out;
}

Value Executor::call_values(const std::string& fn, std::vector<Value> args) {
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
    return impl_->call(*f, std::move(args));
}

Value Executor::call(const std::string& fn, const std::vector<ref::Value>& args) { return call_values(fn, convert_args(fn, args)); }

const std::vector<Launch>& Executor::launches() const { return impl_->launches; }

int64_t Executor::unfused_launches() const { return impl_->unfused; }

std::vector<const kernel::Kernel*> Executor::kernels() const { return impl_->first; }

const kernel::BufferPool& Executor::buffers() const { return impl_->buffers; }

} // namespace presk::realize
