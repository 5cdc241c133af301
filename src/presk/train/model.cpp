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

// ---------------------------------------------------------------------------------------------
// The reference interpreter.

class InterpModel final : public Model {
public:
    InterpModel(const Programs& p, long bits, uint64_t seed)
        : p_(p), bits_(bits), loss_(p.loss, {bits, seed, false}), grad_(p.grad, {bits, seed, false}),
          adamw_(p.adamw, {bits, seed, false}), self_(adamw_.init_params()) {}

    void start(const ref::Value& theta0) override {
        theta_ = theta0;
        m_ = s_ = map_leaves(theta0, "", [&](const ref::Value& leaf, const std::string&) {
            ref::Tensor t;
            t.type = leaf.type;
            t.re.assign(leaf.t->re.size(), ref::Real(bits_));  // zeros
            return ref::make_tensor(std::move(t));
        });
    }

    double loss(const std::vector<ref::Value>& inputs) override {
        return loss_.call(p_.loss.entry, with_params(inputs)).t->re.at(0).to_double();
    }

    double gradient(const std::vector<ref::Value>& inputs) override {
        g_ = grad_.call(p_.grad.entry, with_params(inputs));
        double sum = 0;
        each_leaf(g_, "", [&](const ref::Value& leaf, const std::string&) {
            for (const ref::Real& x : leaf.t->re) sum += x.to_double() * x.to_double();
        });
        return std::sqrt(sum);
    }

    void update(int64_t t, double lr) override {
        ref::Value out = adamw_.call(p_.adamw.entry, {self_, theta_, g_, m_, s_, scalar((double)t), scalar(lr)});
        theta_ = out.items.at(0);
        m_ = out.items.at(1);
        s_ = out.items.at(2);
    }

    std::vector<Blob> save() const override {
        std::vector<Blob> blobs;
        const ref::Value* trees[3] = {&theta_, &m_, &s_};
        for (int k = 0; k < 3; ++k)
            each_leaf(*trees[k], "", [&](const ref::Value& leaf, const std::string& path) {
                Blob b{std::string(kGroups[k]) + "." + path, "mpfr", (int64_t)leaf.t->re.size(), {}};
                for (const ref::Real& x : leaf.t->re) b.bytes += exact_text(x) + '\0';
                blobs.push_back(std::move(b));
            });
        return blobs;
    }

    void load(const std::vector<Blob>& blobs) override {
        BlobIndex index(blobs);
        ref::Value* trees[3] = {&theta_, &m_, &s_};
        for (int k = 0; k < 3; ++k)
            *trees[k] = map_leaves(*trees[k], "", [&](const ref::Value& leaf, const std::string& path) {
                const std::string name = std::string(kGroups[k]) + "." + path;
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
            });
        index.finish();
    }

private:
    const Programs& p_;
    long bits_;
    ref::Interp loss_, grad_, adamw_;
    ref::Value self_;  // the AdamW module's parameters: none
    ref::Value theta_, m_, s_, g_;

    std::vector<ref::Value> with_params(const std::vector<ref::Value>& inputs) const {
        std::vector<ref::Value> args{theta_};
        args.insert(args.end(), inputs.begin(), inputs.end());
        return args;
    }

    ref::Value scalar(double x) const {
        ref::Tensor t;
        t.type = scalar_type();
        t.re.emplace_back(bits_);
        mpfr_set_d(t.re.back().get(), x, MPFR_RNDN);  // exact: bits >= 53
        return ref::make_tensor(std::move(t));
    }

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

class KernelModel final : public Model {
public:
    KernelModel(const Programs& p, const std::string& backend, const realize::Realization& r, uint64_t seed, int threads)
        : p_(p), type_(r.default_type), loss_(p.loss, default_only(r), exec_options(backend, seed, threads)),
          grad_(p.grad, r, exec_options(backend, seed, threads)),
          adamw_(p.adamw, default_only(r), exec_options(backend, seed, threads)),
          self_(realize::from_ref(ref::Interp(p.adamw, {}).init_params(), type_)) {}

    void start(const ref::Value& theta0) override {
        theta_ = realize::from_ref(theta0, type_);
        m_ = s_ = map_leaves(theta_, "", [](const realize::Value& leaf, const std::string&) {
            realize::Value z;
            z.type = leaf.type;
            z.t = kernel::Data::from_reals(leaf.t->dtype(), std::vector<double>((size_t)leaf.t->size(), 0.0));
            return z;
        });
    }

    double loss(const std::vector<ref::Value>& inputs) override {
        return loss_.call_values(p_.loss.entry, with_params(inputs)).t->real(0);
    }

    double gradient(const std::vector<ref::Value>& inputs) override {
        g_ = grad_.call_values(p_.grad.entry, with_params(inputs));
        double sum = 0;
        each_leaf(g_, "", [&](const realize::Value& leaf, const std::string&) {
            for (int64_t i = 0; i < leaf.t->size(); ++i) sum += leaf.t->real(i) * leaf.t->real(i);
        });
        return std::sqrt(sum);
    }

    void update(int64_t t, double lr) override {
        realize::Value out = adamw_.call_values(p_.adamw.entry, {self_, theta_, g_, m_, s_, scalar((double)t), scalar(lr)});
        theta_ = out.items.at(0);
        m_ = out.items.at(1);
        s_ = out.items.at(2);
    }

    std::vector<Blob> save() const override {
        static_assert(std::endian::native == std::endian::little, "checkpoints hold the host's little-endian buffers");
        std::vector<Blob> blobs;
        const realize::Value* trees[3] = {&theta_, &m_, &s_};
        for (int k = 0; k < 3; ++k)
            each_leaf(*trees[k], "", [&](const realize::Value& leaf, const std::string& path) {
                const kernel::Data& d = *leaf.t;
                blobs.push_back({std::string(kGroups[k]) + "." + path, kernel::dtype_name(d.dtype()), d.size(),
                                 std::string((const char*)d.raw(), (size_t)d.size() * kernel::element_size(d.dtype()))});
            });
        return blobs;
    }

    void load(const std::vector<Blob>& blobs) override {
        BlobIndex index(blobs);
        realize::Value* trees[3] = {&theta_, &m_, &s_};
        for (int k = 0; k < 3; ++k)
            *trees[k] = map_leaves(*trees[k], "", [&](const realize::Value& leaf, const std::string& path) {
                const kernel::DType t = leaf.t->dtype();
                const Blob& b = index.take(std::string(kGroups[k]) + "." + path, kernel::dtype_name(t), leaf.t->size());
                realize::Value v;
                v.type = leaf.type;
                v.t = kernel::Data(t, leaf.t->size());
                if (!b.bytes.empty()) std::memcpy(v.t->raw(), b.bytes.data(), b.bytes.size());
                return v;
            });
        index.finish();
    }

private:
    const Programs& p_;
    kernel::DType type_;
    realize::Executor loss_, grad_, adamw_;
    realize::Value self_;  // the AdamW module's parameters: none
    realize::Value theta_, m_, s_, g_;

    std::vector<realize::Value> with_params(const std::vector<ref::Value>& inputs) const {
        std::vector<realize::Value> args{theta_};
        for (const ref::Value& v : inputs) args.push_back(realize::from_ref(v, type_));
        return args;
    }

    realize::Value scalar(double x) const {
        realize::Value v;
        v.type = scalar_type();
        v.t = kernel::Data::from_reals(type_, {x});
        return v;
    }
};

} // namespace

std::unique_ptr<Model> interp_model(const Programs& p, long bits, uint64_t seed) {
    return std::make_unique<InterpModel>(p, bits, seed);
}

std::unique_ptr<Model> kernel_model(const Programs& p, const std::string& backend, const realize::Realization& r,
                                    uint64_t seed, int threads) {
    return std::make_unique<KernelModel>(p, backend, r, seed, threads);
}

} // namespace presk::train
