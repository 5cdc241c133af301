// Runtime values of the kernel backend: the seam's conversions from and to the reference's
// values, their printing, and the stack operations a fold needs.
#include <algorithm>
#include <cstring>

#include "lang/source.h"
#include "ref/print.h"
#include "realize/host.h"

namespace presk::realize {
namespace {

Value tree(const TypeP& type, std::vector<Value> items) {
    Value v;
    v.type = type;
    v.items = std::move(items);
    return v;
}

// Element k of tensor value `v` as ref/print.h's writer asks for it.
struct Element {
    int digits;
    void operator()(const Value& v, int64_t k, std::string& out) const {
        if (v.t->dtype() == kernel::DType::I64) out += std::to_string(v.t->integer(k));
        else ref::append_real(out, v.t->real(k), digits);
    }
};

} // namespace

Value from_ref(const ref::Value& v, kernel::DType t) { return detail::from_ref(v, t, {}, ""); }

ref::Value to_ref(const Value& v, long bits) {
    if (!v.t) {
        std::vector<ref::Value> items;
        for (const Value& i : v.items) items.push_back(to_ref(i, bits));
        return ref::make_tree(v.type, std::move(items));
    }
    ref::Tensor t;
    t.type = v.type;
    if (v.t->dtype() == kernel::DType::I64) {
        t.in = v.t->ints();
    } else {
        t.re.reserve((size_t)v.t->size());
        for (int64_t i = 0; i < v.t->size(); ++i) {
            t.re.emplace_back(std::max<long>(bits, 53));
            mpfr_set_d(t.re.back().get(), v.t->real(i), MPFR_RNDN);  // exact: 53 bits or more
        }
    }
    return ref::make_tensor(std::move(t));
}

void write_text(std::ostream& os, const Value& v, int digits) { ref::write_value(os, v, false, Element{digits}); }

void write_json(std::ostream& os, const Value& v, int digits) { ref::write_value(os, v, true, Element{digits}); }

namespace detail {

Value from_ref(const ref::Value& v, kernel::DType t, const std::map<std::string, kernel::DType>& by_path,
               const std::string& path, const std::map<std::string, kernel::Data>* blocks) {
    if (!v.t) {
        std::vector<Value> items;
        for (size_t i = 0; i < v.items.size(); ++i) {
            std::string p = v.type->kind == Type::Record ? v.type->names.at(i) : std::to_string(i);
            items.push_back(from_ref(v.items[i], t, by_path, path.empty() ? p : path + "." + p, blocks));
        }
        return tree(v.type, std::move(items));
    }
    if (v.t->type->elem != Elem::Real) return tensor_value(v.type, kernel::Data::from_ints(v.t->in));
    auto it = by_path.find(path);
    if (it != by_path.end() && kernel::quantised(it->second)) {
        std::vector<double> x;
        x.reserve(v.t->re.size());
        for (const ref::Real& r : v.t->re) x.push_back(r.to_double());
        const auto b = blocks ? blocks->find(path) : std::map<std::string, kernel::Data>::const_iterator{};
        if (!blocks || b == blocks->end())
            return tensor_value(v.type, kernel::Data::from_reals(it->second, x));  // each rounded to f32, then encoded
        if (b->second.dtype() != it->second)
            throw Error({}, "parameter " + path + " is stored as " + kernel::dtype_name(b->second.dtype()) +
                                " blocks, and the realization quantises it as " + kernel::dtype_name(it->second));
        if (b->second.size() != (int64_t)x.size() || b->second.reals() != x)
            throw Error({}, "parameter " + path + ": its stored blocks do not hold the values given for it");
        return tensor_value(v.type, b->second);
    }
    kernel::Data d(it == by_path.end() ? t : it->second, (int64_t)v.t->re.size());
    for (size_t i = 0; i < v.t->re.size(); ++i) d.set_real((int64_t)i, v.t->re[i].to_double());  // rounded to the type
    return tensor_value(v.type, std::move(d));
}

Value tensor_value(const TypeP& type, kernel::Data d) {
    Value v;
    v.type = type;
    v.t = std::move(d);
    return v;
}

kernel::Data convert(const kernel::Data& d, kernel::DType t, kernel::BufferPool* pool) {
    if (d.dtype() == t || d.dtype() == kernel::DType::I64 || t == kernel::DType::I64) return d;
    if (kernel::quantised(d.dtype())) return convert(kernel::Data::from_reals(kernel::DType::F32, d.reals()), t, pool);  // exact
    kernel::Data c(t, d.size(), pool);
    for (int64_t i = 0; i < d.size(); ++i) c.set_real(i, d.real(i));
    return c;
}

kernel::DType wider(kernel::DType a, kernel::DType b) {
    auto rank = [](kernel::DType t) { return t == kernel::DType::F64 ? 2 : t == kernel::DType::F32 ? 1 : 0; };
    return rank(a) >= rank(b) ? a : b;
}

namespace {

constexpr size_t kMaxTypes = 4096;  // the memo's size at which it is emptied

} // namespace

TypeMemo::Entry& TypeMemo::at(const TypeP& t, int64_t n) {
    const Key key{t.get(), n};
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    if (memo_.size() >= kMaxTypes) memo_.clear();
    Entry& e = memo_[key];
    e.from = t;
    return e;
}

TypeP TypeMemo::unstacked(const TypeP& t) {
    Entry& e = at(t, -1);
    if (!e.to) e.to = presk::unstacked(*t);
    return e.to;
}

TypeP TypeMemo::stacked(const TypeP& t, int64_t n) {
    Entry& e = at(t, n);
    if (!e.to) e.to = presk::stacked(t, n);
    return e.to;
}

TypeP TypeMemo::stacked_tree(const TypeP& t, int64_t n, const std::vector<TypeP>& items) {
    Entry& e = at(t, n);
    if (!e.to || e.to->items != items) e.to = t->kind == Type::Tuple ? tuple_type(items) : record_type(t->names, items);
    return e.to;
}

Value slice_first(const Value& v, int64_t l, TypeMemo& types) {
    if (!v.t) {
        std::vector<Value> items;
        items.reserve(v.items.size());
        for (const Value& i : v.items) items.push_back(slice_first(i, l, types));
        return tree(types.unstacked(v.type), std::move(items));
    }
    if (v.type->axes.empty() || l < 0 || l >= v.type->axes[0].size)
        throw Error({}, "layer " + std::to_string(l) + " of a stack of type " + to_string(*v.type));
    TypeP type = types.unstacked(v.type);
    const int64_t n = type->numel();
    return tensor_value(std::move(type), v.t->view(l * n, n));
}

Value stack_first(const std::vector<Value>& parts, TypeMemo& types, kernel::BufferPool* pool) {
    if (parts.empty()) throw Error({}, "a stack of no values");
    const Value& p0 = parts.front();
    const int64_t count = (int64_t)parts.size();
    if (!p0.t) {
        std::vector<Value> items;
        std::vector<TypeP> ts;
        std::vector<Value> col;
        for (size_t i = 0; i < p0.items.size(); ++i) {
            col.clear();
            for (const Value& p : parts) col.push_back(p.items.at(i));
            items.push_back(stack_first(col, types, pool));
            ts.push_back(items.back().type);
        }
        return tree(types.stacked_tree(p0.type, count, ts), std::move(items));
    }
    kernel::DType dt = p0.t->dtype();
    int64_t total = 0;
    for (const Value& p : parts) {
        if (!p.t || (p.t->dtype() == kernel::DType::I64) != (dt == kernel::DType::I64))
            throw Error({}, "a stack of values of different types");
        if (dt != kernel::DType::I64) dt = wider(dt, p.t->dtype());
        total += p.t->size();
    }
    if (kernel::quantised(dt)) dt = kernel::DType::F32;  // quantised layers stacked: their values
    kernel::Data d(dt, total, pool);
    char* at = static_cast<char*>(d.raw());
    const size_t e = kernel::element_size(dt);
    for (const Value& p : parts) {
        const kernel::Data c = convert(*p.t, dt, pool);  // exact: every part's type is at most as wide
        if (c.size()) std::memcpy(at, c.raw(), (size_t)c.size() * e);
        at += (size_t)c.size() * e;
    }
    return tensor_value(types.stacked(p0.type, count), std::move(d));
}

} // namespace detail
} // namespace presk::realize
