// The element texts of print.h and JSON string escaping.
#include "ref/print.h"

namespace presk::ref {

void append_real(std::string& out, mpfr_srcptr x, int digits) {
    if (mpfr_nan_p(x)) {
        out += "nan";
        return;
    }
    if (mpfr_inf_p(x)) {
        out += mpfr_sgn(x) > 0 ? "inf" : "-inf";
        return;
    }
    char small[64];
    const int n = mpfr_snprintf(small, sizeof small, "%.*Rg", digits, x);
    if (n < 0) {
        out += "?";
    } else if ((size_t)n < sizeof small) {
        out.append(small, (size_t)n);
    } else {  // more digits than the buffer holds
        char* s = nullptr;
        if (mpfr_asprintf(&s, "%.*Rg", digits, x) < 0 || !s) {
            out += "?";
            return;
        }
        out += s;
        mpfr_free_str(s);
    }
}

void append_real(std::string& out, double x, int digits) {
    MPFR_DECL_INIT(m, 53);
    mpfr_set_d(m, x, MPFR_RNDN);  // exact
    append_real(out, m, digits);
}

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

} // namespace presk::ref
