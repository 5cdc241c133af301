// An exact-precision real: an owning wrapper of an MPFR number.
#pragma once
#include <mpfr.h>

#include <string>

namespace presk::ref {

class Real {
public:
    explicit Real(mpfr_prec_t bits) { mpfr_init2(v_, bits); mpfr_set_zero(v_, 1); }
    Real(const Real& o) { mpfr_init2(v_, mpfr_get_prec(o.v_)); mpfr_set(v_, o.v_, MPFR_RNDN); }
    Real& operator=(const Real& o) {
        if (this != &o) { mpfr_set_prec(v_, mpfr_get_prec(o.v_)); mpfr_set(v_, o.v_, MPFR_RNDN); }
        return *this;
    }
    ~Real() { mpfr_clear(v_); }
    mpfr_ptr get() { return v_; }
    mpfr_srcptr get() const { return v_; }
    double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }
    /// Decimal text with `digits` significant digits ("inf", "-inf", "nan" for those).
    std::string text(int digits) const;

private:
    mpfr_t v_;
};

} // namespace presk::ref
