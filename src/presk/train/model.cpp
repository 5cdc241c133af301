#include "train/model.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <mpfr.h>

#include "lang/source.h"
#include "realize/executor.h"
#include "ref/interp.h"

namespace presk::train {
namespace {

/// `v` with every tensor leaf replaced by f(leaf, its path); V is ref::Value or
/// realize::Value (a type, a tensor or items).
template <class V, class F>
V map_leaves(const V& v, const std::string& path, F&& f) {
    if (v.type->kind == Type::Tensor) return f(v, path);
    V out;
    out.type = v.type;
    for (size_t i = 0; i < v.items.size(); ++i) {
        const std::string p = v.type->kind == Type::Record ? v.type->names[i] : std::to_string(i);
        out.items.push_back(map_leaves(v.items[i], path.empty() ? p : path + "." + p, f));
    }
    return out;
}

/// Calls f(leaf, path) on every tensor leaf of `v` in tree order.
template <class V, class F>
void each_leaf(const V& v, const std::string& path, F&& f) {
    map_leaves(v, path, [&](const V& leaf, const std::string& p) {
        f(leaf, p);
        return leaf;
    });
}

/// The checkpoint's tensors by name, each taken once: load() refuses what is left over.
class BlobIndex {
public:
    explicit BlobIndex(const std::vector<Blob>& blobs) {
        for (const Blob& b : blobs)
            if (!by_name_.emplace(b.name, &b).second) throw Error({}, "the checkpoint holds tensor " + b.name + " twice");
    }
    /// The tensor `name`, checked to be of `dtype` with `count` elements.
    const Blob& take(const std::string& name, const std::string& dtype, int64_t count) {
        auto it = by_name_.find(name);
        if (it == by_name_.end()) throw Error({}, "the checkpoint has no tensor " + name + " (another model?)");
        const Blob& b = *it->second;
        if (b.dtype != dtype || b.count != count)
            throw Error({}, "the checkpoint's tensor " + name + " is " + b.dtype + "[" + std::to_string(b.count) +
                                "], this run's " + dtype + "[" + std::to_string(count) + "] (another model or realization?)");
        by_name_.erase(it);
        return b;
    }
    /// Refuses the tensors not taken.
    void finish() const {
        if (!by_name_.empty()) throw Error({}, "the checkpoint has tensor " + by_name_.begin()->first + ", which this model lacks");
    }

private:
    std::map<std::string, const Blob*> by_name_;
};

const char* const kGroups[3] = {"params", "m", "s"};

/// The three entries of a run, indexing the engines that run them.
enum Entry { Loss, Grad, Adamw };

/// The state and the loop's operations over values of type V, the same for every backend;
/// Derived (CRTP) runs an entry (call), converts an input and a scalar, sums a leaf's squares,
/// and turns a leaf into a checkpoint tensor and back (to_blob, from_blob).
template <class V, class Derived>
class TreeModel : public Model {
public:
    double loss(const std::vector<ref::Value>& inputs) override {
        return Derived::first(d().call(Loss, with_params(inputs)));
    }

    double gradient(const std::vector<ref::Value>& inputs) override {
        g_ = d().call(Grad, with_params(inputs));
        double sum = 0;
        each_leaf(g_, "", [&](const V& leaf, const std::string&) { sum += Derived::sum_squares(leaf); });
        return std::sqrt(sum);
    }

    void update(int64_t t, double lr) override {
        V out = d().call(Adamw, {self_, theta_, g_, m_, s_, d().scalar((double)t), d().scalar(lr)});
        theta_ = out.items.at(0);
        m_ = out.items.at(1);
        s_ = out.items.at(2);
    }

    std::vector<Blob> save() const override {
        std::vector<Blob> blobs;
        const V* trees[3] = {&theta_, &m_, &s_};
        for (int k = 0; k < 3; ++k)
            each_leaf(*trees[k], "", [&](const V& leaf, const std::string& path) {
                blobs.push_back(Derived::to_blob(std::string(kGroups[k]) + "." + path, leaf));
            });
        return blobs;
    }

    void load(const std::vector<Blob>& blobs) override {
        BlobIndex index(blobs);
        V* trees[3] = {&theta_, &m_, &s_};
        for (int k = 0; k < 3; ++k)
            *trees[k] = map_leaves(*trees[k], "", [&](const V& leaf, const std::string& path) {
                return d().from_blob(index, std::string(kGroups[k]) + "." + path, leaf);
            });
        index.finish();
    }

protected:
    V self_;  // the AdamW module's parameters: none
    V theta_, m_, s_, g_;

    /// θ = theta, m = s = zeros(leaf) of each leaf.
    template <class Zeros>
    void begin(V theta, Zeros zeros) {
        theta_ = std::move(theta);
        m_ = s_ = map_leaves(theta_, "", [&](const V& leaf, const std::string&) { return zeros(leaf); });
    }

private:
    Derived& d() { return static_cast<Derived&>(*this); }
    const Derived& d() const { return static_cast<const Derived&>(*this); }

    std::vector<V> with_params(const std::vector<ref::Value>& inputs) const {
        std::vector<V> args{theta_};
        for (const ref::Value& v : inputs) args.push_back(d().input(v));
        return args;
    }
};

// ---------------------------------------------------------------------------------------------
// The reference interpreter.

class InterpModel final : public TreeModel<ref::Value, InterpModel> {
public:
    InterpModel(const Programs& p, long bits, uint64_t seed)
        : p_{&p.loss, &p.grad, &p.adamw}, bits_(bits),
          interp_{ref::Interp(p.loss, {bits, seed, false}), ref::Interp(p.grad, {bits, seed, false}),
                  ref::Interp(p.adamw, {bits, seed, false})} {
        self_ = interp_[Adamw].init_params();
    }

    void start(const ref::Value& theta0) override {
        begin(theta0, [&](const ref::Value& leaf) {
            ref::Tensor t;
            t.type = leaf.type;
            t.re.assign(leaf.t->re.size(), ref::Real(bits_));  // zeros
            return ref::make_tensor(std::move(t));
        });
    }

    ref::Value call(Entry e, const std::vector<ref::Value>& args) { return interp_[e].call(p_[e]->entry, args); }
    ref::Value input(const ref::Value& v) const { return v; }

    ref::Value scalar(double x) const {
        ref::Tensor t;
        t.type = scalar_type();
        t.re.emplace_back(bits_);
        mpfr_set_d(t.re.back().get(), x, MPFR_RNDN);  // exact: bits >= 53
        return ref::make_tensor(std::move(t));
    }

    static double first(const ref::Value& v) { return v.t->re.at(0).to_double(); }

    static double sum_squares(const ref::Value& leaf) {
        double sum = 0;
        for (const ref::Real& x : leaf.t->re) sum += x.to_double() * x.to_double();
        return sum;
    }

    static Blob to_blob(const std::string& name, const ref::Value& leaf) {
        Blob b{name, "mpfr", (int64_t)leaf.t->re.size(), {}};
        for (const ref::Real& x : leaf.t->re) b.bytes += exact_text(x) + '\0';
        return b;
    }

    ref::Value from_blob(BlobIndex& index, const std::string& name, const ref::Value& leaf) const {
        const Blob& b = index.take(name, "mpfr", (int64_t)leaf.t->re.size());
        ref::Tensor t;
        t.type = leaf.type;
        size_t at = 0;
        for (size_t i = 0; i < leaf.t->re.size(); ++i) {
            const size_t end = b.bytes.find('\0', at);
            t.re.emplace_back(bits_);
            if (end == std::string::npos || mpfr_set_str(t.re.back().get(), b.bytes.substr(at, end - at).c_str(), 16, MPFR_RNDN) != 0)
                throw Error({}, "the checkpoint's tensor " + name + " has a malformed number at element " + std::to_string(i));
            at = end + 1;
        }
        if (at != b.bytes.size()) throw Error({}, "the checkpoint's tensor " + name + " has bytes after its last number");
        return ref::make_tensor(std::move(t));
    }

private:
    const core::Program* p_[3];
    long bits_;
    ref::Interp interp_[3];

    /// `x` exactly, in base 16 ("-0.1f@3" is −0x0.1f·16³), as mpfr_set_str reads it back.
    static std::string exact_text(const ref::Real& x) {
        if (mpfr_nan_p(x.get())) return "@NaN@";
        if (mpfr_inf_p(x.get())) return mpfr_sgn(x.get()) > 0 ? "@Inf@" : "-@Inf@";
        if (mpfr_zero_p(x.get())) return mpfr_signbit(x.get()) ? "-0" : "0";
        mpfr_exp_t e = 0;
        char* s = mpfr_get_str(nullptr, &e, 16, 0, x.get(), MPFR_RNDN);
        std::string digits(s);
        mpfr_free_str(s);
        const bool neg = digits[0] == '-';
        return std::string(neg ? "-" : "") + "0." + digits.substr(neg ? 1 : 0) + "@" + std::to_string(e);
    }
};

// ---------------------------------------------------------------------------------------------
// The kernel backends.

realize::ExecOptions exec_options(const std::string& backend, uint64_t seed, int threads) {
    realize::ExecOptions o;
    o.seed = seed;
    o.backend = realize::parse_backend(backend);
    o.threads = threads;
    o.lanes = 0;  // each type's width: lanes change no bit
    o.log_launches = false;
    o.on_note = [](const std::string& note) { std::cerr << "presk: " << note << "\n"; };
    return o;
}

/// `r`'s default type alone: the realization of the objective and the AdamW step, whose sites
/// `r` does not name.
realize::Realization default_only(const realize::Realization& r) {
    realize::Realization d;
    d.default_type = r.default_type;
    d.spelling = r.spelling;
    return d;
}

class KernelModel final : public TreeModel<realize::Value, KernelModel> {
public:
    KernelModel(const Programs& p, const std::string& backend, const realize::Realization& r, uint64_t seed, int threads,
                const realize::Plan& plan)
        : p_{&p.loss, &p.grad, &p.adamw}, type_(r.default_type) {
        ex_[Loss] = std::make_unique<realize::Executor>(p.loss, default_only(r), exec_options(backend, seed, threads));
        realize::ExecOptions grad = exec_options(backend, seed, threads);
        grad.plan = plan;
        ex_[Grad] = std::make_unique<realize::Executor>(p.grad, r, grad);
        ex_[Adamw] = std::make_unique<realize::Executor>(p.adamw, default_only(r), exec_options(backend, seed, threads));
        self_ = realize::from_ref(ref::Interp(p.adamw, {}).init_params(), type_);
    }

    void start(const ref::Value& theta0) override {
        begin(realize::from_ref(theta0, type_), [](const realize::Value& leaf) {
            realize::Value z;
            z.type = leaf.type;
            z.t = kernel::Data::from_reals(leaf.t->dtype(), std::vector<double>((size_t)leaf.t->size(), 0.0));
            return z;
        });
    }

    realize::Value call(Entry e, const std::vector<realize::Value>& args) { return ex_[e]->call_values(p_[e]->entry, args); }
    realize::Value input(const ref::Value& v) const { return realize::from_ref(v, type_); }

    realize::Value scalar(double x) const {
        realize::Value v;
        v.type = scalar_type();
        v.t = kernel::Data::from_reals(type_, {x});
        return v;
    }

    static double first(const realize::Value& v) { return v.t->real(0); }

    static double sum_squares(const realize::Value& leaf) {
        double sum = 0;
        for (int64_t i = 0; i < leaf.t->size(); ++i) sum += leaf.t->real(i) * leaf.t->real(i);
        return sum;
    }

    static Blob to_blob(const std::string& name, const realize::Value& leaf) {
        static_assert(std::endian::native == std::endian::little, "checkpoints hold the host's little-endian buffers");
        const kernel::Data& d = *leaf.t;
        return {name, kernel::dtype_name(d.dtype()), d.size(),
                std::string((const char*)d.raw(), (size_t)d.size() * kernel::element_size(d.dtype()))};
    }

    realize::Value from_blob(BlobIndex& index, const std::string& name, const realize::Value& leaf) const {
        const kernel::DType t = leaf.t->dtype();
        const Blob& b = index.take(name, kernel::dtype_name(t), leaf.t->size());
        realize::Value v;
        v.type = leaf.type;
        v.t = kernel::Data(t, leaf.t->size());
        if (!b.bytes.empty()) std::memcpy(v.t->raw(), b.bytes.data(), b.bytes.size());
        return v;
    }

private:
    const core::Program* p_[3];
    kernel::DType type_;
    std::unique_ptr<realize::Executor> ex_[3];
};

} // namespace

std::unique_ptr<Model> interp_model(const Programs& p, long bits, uint64_t seed) {
    return std::make_unique<InterpModel>(p, bits, seed);
}

std::unique_ptr<Model> kernel_model(const Programs& p, const std::string& backend, const realize::Realization& r,
                                    uint64_t seed, int threads, const realize::Plan& plan) {
    return std::make_unique<KernelModel>(p, backend, r, seed, threads, plan);
}

} // namespace presk::train
