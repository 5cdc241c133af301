// A parameter tree in GGUF files through gk's reader, writer and codec, and the values of
// quantised parameters (realize/params_gguf.h).
#include "realize/params_gguf.h"

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "gk/gguf.h"
#include "kernel/quant.h"
#include "lang/source.h"

namespace presk::realize {
namespace {

using kernel::DType;

struct Closer {
    void operator()(gk_gguf* g) const { gk_gguf_free(g); }
};
using File = std::unique_ptr<gk_gguf, Closer>;

/// `v` with every real leaf replaced by `f(path, leaf)`.
ref::Value map_leaves(const ref::Value& v, const std::string& path,
                      const std::function<ref::Value(const std::string&, const ref::Value&)>& f) {
    if (v.t) return v.t->type->elem == Elem::Real ? f(path, v) : v;
    std::vector<ref::Value> items;
    for (size_t i = 0; i < v.items.size(); ++i) {
        const std::string p = v.type->kind == Type::Record ? v.type->names.at(i) : std::to_string(i);
        items.push_back(map_leaves(v.items[i], path.empty() ? p : path + "." + p, f));
    }
    return ref::make_tree(v.type, std::move(items));
}

/// A tensor value of `type` holding `x`, each exactly, in MPFR numbers of `bits` (at least 53).
ref::Value exact(const TypeP& type, const std::vector<float>& x, long bits) {
    ref::Tensor t;
    t.type = type;
    t.re.reserve(x.size());
    for (float f : x) {
        t.re.emplace_back(std::max<long>(bits, 53));
        mpfr_set_flt(t.re.back().get(), f, MPFR_RNDN);
    }
    return ref::make_tensor(std::move(t));
}

std::vector<float> floats(const ref::Value& v) {
    std::vector<float> x;
    x.reserve(v.t->re.size());
    for (const ref::Real& r : v.t->re) x.push_back((float)r.to_double());  // as from_ref rounds
    return x;
}

/// The GGUF shape of `axes` (innermost first; a scalar is [1]).
std::vector<int64_t> gguf_shape(const std::vector<Axis>& axes) {
    std::vector<int64_t> ne;
    for (size_t j = axes.size(); j-- > 0;) ne.push_back(axes[j].size);
    if (ne.empty()) ne.push_back(1);
    return ne;
}

} // namespace

std::string gguf_tensor_name(const std::string& path) { return path + ".weight"; }

void write_params_gguf(const core::Program& p, const ref::Value& params, const std::map<std::string, DType>& quant,
                       const std::string& file) {
    if (!p.params_type) throw Error({}, file + ": the entry " + p.entry + " has no parameters to write");
    const File g(gk_gguf_create());
    if (!g) throw Error({}, file + ": out of memory");
    gk_gguf_error e{};
    map_leaves(params, "", [&](const std::string& path, const ref::Value& leaf) {
        const std::string name = gguf_tensor_name(path);
        const std::vector<int64_t> ne = gguf_shape(leaf.type->axes);
        if (ne.size() > 4) throw Error({}, file + ": " + name + " has " + std::to_string(ne.size()) + " axes (GGUF holds four)");
        const std::vector<float> x = floats(leaf);
        auto q = quant.find(path);
        const DType t = q == quant.end() ? DType::F32 : q->second;
        std::vector<uint8_t> bytes;
        if (kernel::quantised(t)) {
            if (ne[0] % kernel::kQuantBlock)
                throw Error({}, file + ": " + name + ": its last axis (" + std::to_string(ne[0]) + ") is not whole " +
                                    kernel::dtype_name(t) + " blocks of " + std::to_string(kernel::kQuantBlock));
            bytes.resize((size_t)kernel::quant_bytes(t, (int64_t)x.size()));
            kernel::quantise(t, x.data(), bytes.data(), (int64_t)x.size());
        } else {
            bytes.resize(x.size() * sizeof(float));
            if (!x.empty()) std::memcpy(bytes.data(), x.data(), bytes.size());
        }
        const gk_type gt = kernel::quantised(t) ? (gk_type)kernel::gk_type_of(t) : GK_TYPE_F32;
        if (gk_gguf_add_tensor(g.get(), name.c_str(), gt, (uint32_t)ne.size(), ne.data(), bytes.data(), bytes.size(), &e) != GK_GGUF_OK)
            throw Error({}, file + ": " + name + ": " + e.message);
        return leaf;
    });
    if (gk_gguf_write(g.get(), file.c_str(), &e) != GK_GGUF_OK) throw Error({}, file + ": " + e.message);
}

GgufParams read_params_gguf(const core::Program& p, const std::string& file, long bits) {
    if (!p.params_type) throw Error({}, file + ": the entry " + p.entry + " has no parameters to read");
    gk_gguf_error e{};
    const File g(gk_gguf_open(file.c_str(), &e));
    if (!g) throw Error({}, file + ": " + e.message);
    GgufParams out;
    std::map<std::string, ref::Value> leaves;
    for (const core::ParamSpec& ps : p.params) {
        const std::string name = gguf_tensor_name(ps.path), at = file + ": " + name;
        const int64_t i = gk_gguf_find_tensor(g.get(), name.c_str());
        if (i < 0) throw Error({}, at + ": no such tensor (parameter " + ps.path + " of " + p.entry + ")");
        const std::vector<int64_t> want = gguf_shape(ps.type->axes);
        const uint32_t nd = gk_gguf_tensor_n_dims(g.get(), i);
        const int64_t* ne = gk_gguf_tensor_ne(g.get(), i);
        bool same = true;
        for (size_t j = 0; j < 4; ++j) same = same && ne[j] == (j < want.size() ? want[j] : 1);
        if (!same || nd > std::max<size_t>(want.size(), 1)) {
            std::string has;
            for (uint32_t j = 0; j < nd; ++j) has += (j ? ", " : "") + std::to_string(ne[j]);
            throw Error({}, at + ": shape [" + has + "] (innermost first), where " + ps.path + " is " + to_string(*ps.type));
        }
        const gk_type gt = gk_gguf_tensor_type(g.get(), i);
        if (gt != GK_TYPE_F32 && gt != GK_TYPE_F16 && gt != GK_TYPE_BF16 && gt != GK_TYPE_F64 && gt != GK_TYPE_Q8_0 && gt != GK_TYPE_Q4_0)
            throw Error({}, at + ": type " + gk_type_name(gt) + " (presk reads f32, f16, bf16, f64, q8_0 and q4_0)");
        const int64_t n = ps.type->numel();
        std::vector<float> x((size_t)n);
        if (gt == GK_TYPE_F64) {  // f32 would round it: read exactly
            const double* d = static_cast<const double*>(gk_gguf_tensor_data(g.get(), i));
            ref::Tensor t;
            t.type = ps.type;
            for (int64_t k = 0; k < n; ++k) {
                t.re.emplace_back(std::max<long>(bits, 53));
                mpfr_set_d(t.re.back().get(), d[k], MPFR_RNDN);
            }
            leaves[ps.path] = ref::make_tensor(std::move(t));
            continue;
        }
        if (gk_gguf_tensor_to_f32(g.get(), i, 0, gk_gguf_tensor_nrows(g.get(), i), x.data(), &e) != GK_GGUF_OK)
            throw Error({}, at + ": " + e.message);
        if (gt == GK_TYPE_Q8_0 || gt == GK_TYPE_Q4_0) {
            const DType t = gt == GK_TYPE_Q8_0 ? DType::I8 : DType::I4;
            kernel::Data d(t, n);
            std::memcpy(d.raw(), gk_gguf_tensor_data(g.get(), i), kernel::bytes_of(t, n));
            out.blocks.emplace(ps.path, std::move(d));
        }
        leaves[ps.path] = exact(ps.type, x, bits);
    }
    std::function<ref::Value(const TypeP&, const std::string&)> tree = [&](const TypeP& t, const std::string& path) {
        if (t->kind == Type::Tensor) return leaves.at(path);
        std::vector<ref::Value> items;
        for (size_t i = 0; i < t->items.size(); ++i)
            items.push_back(tree(t->items[i], path.empty() ? t->names[i] : path + "." + t->names[i]));
        return ref::make_tree(t, std::move(items));
    };
    out.params = tree(p.params_type, "");
    return out;
}

ref::Value quantised_values(const ref::Value& params, const std::map<std::string, DType>& quant, long bits,
                            const std::map<std::string, kernel::Data>& stored) {
    if (quant.empty()) return params;
    return map_leaves(params, "", [&](const std::string& path, const ref::Value& leaf) {
        auto q = quant.find(path);
        if (q == quant.end() || stored.count(path)) return leaf;
        const std::vector<float> x = floats(leaf);
        std::vector<uint8_t> b((size_t)kernel::quant_bytes(q->second, (int64_t)x.size()));
        std::vector<float> back(x.size());
        kernel::quantise(q->second, x.data(), b.data(), (int64_t)x.size());
        kernel::dequantise(q->second, b.data(), back.data(), (int64_t)x.size());
        return exact(leaf.type, back, bits);
    });
}

} // namespace presk::realize
