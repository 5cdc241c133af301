#include "ref/values.h"

#include <cstdio>

namespace presk::ref {

std::string Real::text(int digits) const {
    if (mpfr_nan_p(v_)) return "nan";
    if (mpfr_inf_p(v_)) return mpfr_sgn(v_) > 0 ? "inf" : "-inf";
    char* s = nullptr;
    if (mpfr_asprintf(&s, "%.*Rg", digits, v_) < 0 || !s) return "?";
    std::string r(s);
    mpfr_free_str(s);
    return r;
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

void nested(const Tensor& t, size_t axis, int64_t& k, int digits, bool json, std::string& out) {
    const auto& axes = t.type->axes;
    if (axis == axes.size()) {
        if (t.type->elem == Elem::Real) {
            std::string s = t.re[k].text(digits);
            out += json && (s == "nan" || s == "inf" || s == "-inf") ? "\"" + s + "\"" : s;
        } else {
            out += std::to_string(t.in[k]);
        }
        ++k;
        return;
    }
    out += "[";
    for (int64_t i = 0; i < axes[axis].size; ++i) {
        if (i) out += ", ";
        nested(t, axis + 1, k, digits, json, out);
    }
    out += "]";
}

std::string tensor_data(const Tensor& t, int digits, bool json) {
    std::string s;
    int64_t k = 0;
    nested(t, 0, k, digits, json, s);
    return s;
}

} // namespace

std::string json_escape(const std::string& s) {
    static const char hex[] = "0123456789abcdef";
    std::string r;
    for (char c : s) {
        const auto u = (unsigned char)c;
        if (c == '"' || c == '\\') {
            r += '\\';
            r += c;
        } else if (u < 0x20) {
            r += "\\u00";
            r += hex[u >> 4];
            r += hex[u & 15];
        } else {
            r += c;
        }
    }
    return r;
}

std::string to_text(const Value& v, int digits) {
    if (v.t) return to_string(*v.type) + " = " + tensor_data(*v.t, digits, false);
    std::string s = v.type->kind == Type::Tuple ? "(" : "{";
    for (size_t i = 0; i < v.items.size(); ++i) {
        s += i ? ",\n " : "";
        if (v.type->kind == Type::Record) s += v.type->names[i] + ": ";
        s += to_text(v.items[i], digits);
    }
    return s + (v.type->kind == Type::Tuple ? ")" : "}");
}

std::string to_json(const Value& v, int digits) {
    if (v.t) return "{\"type\": \"" + json_escape(to_string(*v.type)) + "\", \"data\": " + tensor_data(*v.t, digits, true) + "}";
    bool rec = v.type->kind == Type::Record;
    std::string s = rec ? "{" : "[";
    for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) s += ", ";
        if (rec) s += "\"" + json_escape(v.type->names[i]) + "\": ";
        s += to_json(v.items[i], digits);
    }
    return s + (rec ? "}" : "]");
}

} // namespace presk::ref
