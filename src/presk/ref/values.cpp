#include "ref/values.h"

#include <sstream>

namespace presk::ref {

std::string Real::text(int digits) const {
    std::string s;
    append_real(s, v_, digits);
    return s;
}

Value make_tensor(Tensor t) {
    Value v;
    v.type = t.type;
    v.t = std::make_shared<const Tensor>(std::move(t));
    return v;
}

Value make_tree(const TypeP& type, std::vector<Value> items) {
    Value v;
    v.type = type;
    v.items = std::move(items);
    return v;
}

Value slice_first(const Value& v, int64_t l) {
    if (!v.t) {
        std::vector<Value> items;
        for (const Value& i : v.items) items.push_back(slice_first(i, l));
        return make_tree(unstacked(*v.type), std::move(items));
    }
    Tensor out;
    out.type = unstacked(*v.type);
    int64_t n = out.type->numel();
    if (v.type->elem == Elem::Real) out.re.assign(v.t->re.begin() + l * n, v.t->re.begin() + (l + 1) * n);
    else out.in.assign(v.t->in.begin() + l * n, v.t->in.begin() + (l + 1) * n);
    return make_tensor(std::move(out));
}

Value stack_first(const std::vector<Value>& parts) {
    const Value& p0 = parts.front();
    if (!p0.t) {
        std::vector<Value> items;
        std::vector<TypeP> ts;
        for (size_t i = 0; i < p0.items.size(); ++i) {
            std::vector<Value> col;
            for (const Value& p : parts) col.push_back(p.items[i]);
            items.push_back(stack_first(col));
            ts.push_back(items.back().type);
        }
        TypeP t = p0.type->kind == Type::Tuple ? tuple_type(ts) : record_type(p0.type->names, ts);
        return make_tree(t, std::move(items));
    }
    Tensor out;
    auto axes = p0.type->axes;
    axes.insert(axes.begin(), Axis{"", (int64_t)parts.size()});
    out.type = tensor_type(p0.type->elem, axes, p0.type->bound);
    for (const Value& p : parts) {
        out.re.insert(out.re.end(), p.t->re.begin(), p.t->re.end());
        out.in.insert(out.in.end(), p.t->in.begin(), p.t->in.end());
    }
    return make_tensor(std::move(out));
}

namespace {

// Element k of tensor value `v` as print.h's writer asks for it.
struct Element {
    int digits;
    void operator()(const Value& v, int64_t k, std::string& out) const {
        if (v.type->elem == Elem::Real) append_real(out, v.t->re[(size_t)k].get(), digits);
        else out += std::to_string(v.t->in[(size_t)k]);
    }
};

} // namespace

void write_text(std::ostream& os, const Value& v, int digits) { write_value(os, v, false, Element{digits}); }

void write_json(std::ostream& os, const Value& v, int digits) { write_value(os, v, true, Element{digits}); }

std::string to_text(const Value& v, int digits) {
    std::ostringstream os;
    write_text(os, v, digits);
    return os.str();
}

std::string to_json(const Value& v, int digits) {
    std::ostringstream os;
    write_json(os, v, digits);
    return os.str();
}

} // namespace presk::ref
