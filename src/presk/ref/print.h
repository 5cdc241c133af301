// How presk prints values (`presk run`'s lines and its --out JSON), written once for every
// value tree: the reference's (MPFR reals) and the kernel backend's (doubles) give only the
// text of their elements, the layout is this file's.
#pragma once
#include <mpfr.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "core/types.h"

namespace presk::ref {

/// Appends `x` with `digits` significant digits (MPFR's %.*Rg of the exact value: the shortest
/// of fixed and exponent notation, trailing zeros dropped), or "nan", "inf", "-inf".
void append_real(std::string& out, mpfr_srcptr x, int digits);
/// The same digits for a double: exactly append_real of an MPFR number equal to `x`.
void append_real(std::string& out, double x, int digits);

/// `s` as the inside of a JSON string: '"' and '\\' escaped, control characters as \u00XX
/// (other bytes as given).
std::string json_escape(const std::string& s);

/// Writes the value tree `v` to `os`. Text (`json` false): a tensor as its type, " = " and its
/// elements in nested brackets per axis ("[[1, 2], [3, 4]]"); a tuple as "(a,\n b)"; a record
/// as "{x: a,\n y: b}". JSON: a tensor as {"type": "...", "data": nested arrays}, a tuple as
/// an array, a record as an object; nan and the infinities as the strings "nan", "inf", "-inf".
/// V is a value tree: `type` always set, `t` non-null for a tensor, `items` for a tuple or a
/// record. `elem(tensor, k, out)` appends element k (row-major) of tensor value `tensor` to
/// `out`. The text goes out in chunks: the memory used is a chunk, not the text.
template <class V, class Elem>
void write_value(std::ostream& os, const V& v, bool json, const Elem& elem);

namespace detail {

template <class V, class Elem>
class ValueWriter {
public:
    ValueWriter(std::ostream& os, bool json, const Elem& elem) : os_(os), json_(json), elem_(elem) {}
    ~ValueWriter() { flush(); }

    void value(const V& v) {
        if (v.t) {
            buf_ += json_ ? "{\"type\": \"" : "";
            buf_ += json_ ? json_escape(to_string(*v.type)) : to_string(*v.type);
            buf_ += json_ ? "\", \"data\": " : " = ";
            int64_t k = 0;
            data(v, 0, k);
            if (json_) buf_ += "}";
            return;
        }
        const bool rec = v.type->kind == Type::Record;
        buf_ += rec ? "{" : json_ ? "[" : "(";
        for (size_t i = 0; i < v.items.size(); ++i) {
            if (i) buf_ += json_ ? ", " : ",\n ";
            if (rec) {
                buf_ += json_ ? "\"" : "";
                buf_ += json_ ? json_escape(v.type->names[i]) : v.type->names[i];
                buf_ += json_ ? "\": " : ": ";
            }
            value(v.items[i]);
        }
        buf_ += rec ? "}" : json_ ? "]" : ")";
    }

private:
    std::ostream& os_;
    const bool json_;
    const Elem& elem_;
    std::string buf_;

    void flush() {
        os_.write(buf_.data(), (std::streamsize)buf_.size());
        buf_.clear();
    }

    void data(const V& v, size_t axis, int64_t& k) {
        const auto& axes = v.type->axes;
        if (axis == axes.size()) {
            const size_t at = buf_.size();
            elem_(v, k++, buf_);
            const std::string_view s(buf_.data() + at, buf_.size() - at);
            if (json_ && (s == "nan" || s == "inf" || s == "-inf")) {
                buf_.insert(at, 1, '"');
                buf_ += '"';
            }
            if (buf_.size() >= (1u << 16)) flush();
            return;
        }
        buf_ += "[";
        for (int64_t i = 0; i < axes[axis].size; ++i) {
            if (i) buf_ += ", ";
            data(v, axis + 1, k);
        }
        buf_ += "]";
    }
};

} // namespace detail

template <class V, class Elem>
void write_value(std::ostream& os, const V& v, bool json, const Elem& elem) {
    detail::ValueWriter<V, Elem>(os, json, elem).value(v);
}

} // namespace presk::ref
