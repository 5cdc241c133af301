// The primitives the kernel backend evaluates on the host (kernel::is_host_prim): the
// structural ones move elements without arithmetic, in the operand's storage type; sample and
// dropout draw from the reference's ChaCha streams, under the reference's keys, and compute in
// the arithmetic type of their site's storage (docs/presk.md, "The host program").
#include <cmath>
#include <cstring>
#include <sstream>

#include "kernel/pmath.h"
#include "kernel/quant.h"
#include "lang/source.h"
#include "realize/host.h"
#include "ref/chacha.h"

namespace presk::realize::detail {
namespace {

using kernel::Data;
using kernel::DType;

[[noreturn]] void fail(const core::Let& l, const std::string& msg) { throw Error({}, l.name + ": " + msg); }

const Data& tensor(const core::Let& l, const std::vector<const Value*>& a, size_t i) {
    if (i >= a.size() || !a[i]->t) fail(l, "operand " + std::to_string(i + 1) + " is not a tensor");
    return *a[i]->t;
}

/// slice, index (down: the part of the operand at `start` along `axis`) and unslice, unindex
/// (up: the operand placed there in zeros of the result's shape).
Value part(const core::Let& l, const std::vector<const Value*>& a, kernel::BufferPool* pool) {
    const bool down = l.name == "slice" || l.name == "index";
    const bool keep = l.name == "slice" || l.name == "unslice";
    const Data& given = tensor(l, a, 0);
    const std::vector<Axis>& big = down ? a[0]->type->axes : l.type->axes;
    const std::vector<Axis>& small = down ? l.type->axes : a[0]->type->axes;
    if (l.ints.size() < 2 || l.ints[0] < 0 || l.ints[0] >= (int64_t)big.size()) fail(l, "bad axis");
    const size_t axis = (size_t)l.ints[0];
    const int64_t start = l.ints[1];
    const int64_t len = keep ? (axis < small.size() ? small[axis].size : -1) : 1;
    const AxisSplit sb = split_at(big, axis);
    const int64_t n_small = (down ? l.type : a[0]->type)->numel(), n_big = (down ? a[0]->type : l.type)->numel();
    if (start < 0 || len < 0 || start + len > sb.n || sb.outer * len * sb.inner != n_small || given.size() != (down ? n_big : n_small))
        fail(l, "the part at " + std::to_string(start) + " does not fit " + axes_string(big));
    const bool whole_blocks = (start * sb.inner) % kernel::kQuantBlock == 0 && n_small % kernel::kQuantBlock == 0;
    if (down && sb.outer == 1 && (!kernel::quantised(given.dtype()) || whole_blocks))
        return tensor_value(l.type, given.view(start * sb.inner, n_small));  // contiguous
    // Elements moved one by one: a quantised operand's values (f32(q) * s, exact in f32).
    const Data x = kernel::quantised(given.dtype()) ? convert(given, DType::F32, pool) : given;
    Data r(x.dtype(), l.type->numel(), pool);
    const size_t e = kernel::element_size(x.dtype()), run = (size_t)(len * sb.inner) * e;
    char* to = static_cast<char*>(r.raw());
    const char* from = static_cast<const char*>(x.raw());
    if (!down) std::memset(to, 0, (size_t)n_big * e);  // zeros of every type are the zero bits
    for (int64_t o = 0; o < sb.outer; ++o) {
        const size_t big = (size_t)((o * sb.n + start) * sb.inner) * e, small = (size_t)(o * len * sb.inner) * e;
        if (run) std::memcpy(to + (down ? small : big), from + (down ? big : small), run);
    }
    return tensor_value(l.type, std::move(r));
}

/// dropout in arithmetic type T: where the stream's uniform u satisfies p <= u the element is
/// x / (1 - p), else 0; outside training the operand itself.
template <class T>
Value dropout(const core::Let& l, const std::vector<const Value*>& a, const HostContext& c) {
    const Data pd = convert(*a[1]->t, kernel::arith_type(c.dtype));  // a rate is a constant: never bf16
    if (pd.size() != 1) fail(l, "the rate is not a scalar");
    if (!(pd.real(0) >= 0 && pd.real(0) < 1)) {
        std::ostringstream m;
        m << "the rate " << pd.real(0) << " is not in [0, 1)";
        fail(l, m.str());
    }
    if (!c.train) return *a[0];
    const Data x = convert(*a[0]->t, c.dtype);
    const T p = (T)pd.real(0);
    const T keep = (T)1 - p;
    ref::ChaCha rng(c.seed, c.key);
    Data r(c.dtype, x.size());
    for (int64_t k = 0; k < x.size(); ++k) {
        const bool on = (double)p <= rng.next_unit();
        r.set_real(k, on ? (double)((T)x.real(k) / keep) : 0.0);  // rounded to the storage type
    }
    return tensor_value(l.type, std::move(r));
}

double exp_of(double x) { return presk_exp(x); }
float exp_of(float x) { return presk_expf(x); }

/// sample in arithmetic type T, per row of the last axis: the last of the equal maxima m, the
/// weights e_j = exp(x_j - m) and their running sums in T; the pick is the first j whose
/// running sum exceeds u * sum (u the stream's uniform; the product formed in f64), else the
/// last class. The reference forms the same sums exactly (256 bits).
template <class T>
Value sample(const core::Let& l, const std::vector<const Value*>& a, const HostContext& c) {
    const Data x = convert(*a[0]->t, c.dtype);
    const std::vector<Axis>& axes = a[0]->type->axes;
    if (axes.empty() || axes.back().size < 1) fail(l, "sampling needs a non-empty last axis");
    const int64_t V = axes.back().size, rows = l.type->numel();
    if (x.size() != rows * V) fail(l, "the operand does not match its type");
    ref::ChaCha rng(c.seed, c.key);
    Data r(DType::I64, rows);
    std::vector<double> xr((size_t)V);  // a row, widened exactly
    std::vector<T> e((size_t)V);
    for (int64_t row = 0; row < rows; ++row) {
        for (int64_t j = 0; j < V; ++j) xr[(size_t)j] = x.real(row * V + j);
        int64_t best = 0;
        for (int64_t j = 1; j < V; ++j)
            if (!(xr[j] < xr[best])) best = j;
        const T m = (T)xr[best];
        T sum = 0;
        for (int64_t j = 0; j < V; ++j) {
            e[(size_t)j] = exp_of((T)((T)xr[j] - m));
            sum = (T)(sum + e[(size_t)j]);
        }
        const double u = rng.next_unit() * (double)sum;
        T acc = 0;
        int64_t pick = V - 1;
        for (int64_t j = 0; j < V; ++j) {
            acc = (T)(acc + e[(size_t)j]);
            if ((double)acc > u) {
                pick = j;
                break;
            }
        }
        r.set_integer(row, pick);
    }
    return tensor_value(l.type, std::move(r));
}

} // namespace

Value host_prim(const core::Let& l, const std::vector<const Value*>& a, const HostContext& c) {
    const std::string& n = l.name;
    const bool f64 = kernel::arith_type(c.dtype) == DType::F64;
    if (n == "slice" || n == "index" || n == "unslice" || n == "unindex") return part(l, a, c.pool);
    if (n == "stack") {
        std::vector<Value> parts;
        for (const Value* v : a) parts.push_back(*v);
        TypeMemo own;
        Value s = stack_first(parts, c.types ? *c.types : own, c.pool);
        s.type = l.type;
        return s;
    }
    if (n == "retype" || n == "split" || n == "merge") {  // the same elements under the result's type
        if (!a.at(0)->t || a[0]->type->numel() != l.type->numel()) fail(l, "the operand does not have the result's size");
        Value v = *a[0];
        v.type = l.type;
        return v;
    }
    if (n == "dropout") {
        tensor(l, a, 0);
        tensor(l, a, 1);
        return f64 ? dropout<double>(l, a, c) : dropout<float>(l, a, c);
    }
    if (n == "sample") {
        tensor(l, a, 0);
        return f64 ? sample<double>(l, a, c) : sample<float>(l, a, c);
    }
    fail(l, "the kernel backend has no host rule for it");
}

} // namespace presk::realize::detail
