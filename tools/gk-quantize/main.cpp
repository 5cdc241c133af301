// gk-quantize - re-encode a GGUF model's weight matrices to another type.
//
//   gk-quantize IN.gguf OUT.gguf TYPE [--imatrix IMATRIX.gguf]
//
// Every matrix named "*weight" (not a norm) becomes TYPE, or a legal fallback where its
// rows are not whole blocks of TYPE (stated on its line); norms, biases and 1-D tensors
// are kept in f32; integer tensors are copied. All metadata is copied and
// general.file_type set to TYPE's llama file type. One progress line per tensor, with
// the relative RMS error of the re-encoded tensor against its decoded original.
// Exit status 0 on success, 1 with one line on stderr on any error (usage included).
#include "imatrix.h"
#include "plan.h"

#include "gk/gguf.h"
#include "quant/codec.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace gk_quantize;

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};
using context = std::unique_ptr<gk_gguf, closer>;

struct error {
    std::string message;
};

[[noreturn]] void fail(const std::string & msg) { throw error{msg}; }

void check(gk_gguf_status s, const gk_gguf_error & err, const std::string & what) {
    if (s != GK_GGUF_OK) {
        fail(what + ": " + err.message);
    }
}

bool is_integer(gk_type t) {
    return t == GK_TYPE_I8 || t == GK_TYPE_I16 || t == GK_TYPE_I32 || t == GK_TYPE_I64;
}

std::vector<float> decode(const gk_gguf * ctx, int64_t i) {
    std::vector<float> x(static_cast<size_t>(gk_gguf_tensor_nelements(ctx, i)));
    gk_gguf_error err;
    check(gk_gguf_tensor_to_f32(ctx, i, 0, gk_gguf_tensor_nrows(ctx, i), x.data(), &err), err,
          std::string("cannot decode ") + gk_gguf_tensor_name(ctx, i));
    return x;
}

// sqrt(sum (x - y)^2 / sum x^2); 0 for an all-zero x equal to y.
double relative_rms_error(const std::vector<float> & x, const std::vector<float> & y) {
    double num = 0, den = 0;
    for (size_t k = 0; k < x.size(); ++k) {
        const double d = static_cast<double>(x[k]) - static_cast<double>(y[k]);
        num += d * d;
        den += static_cast<double>(x[k]) * static_cast<double>(x[k]);
    }
    return den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}

// Encode rows of `x` (a tensor of `nrows` rows of `ne0`) to `type`; with importance
// weights, matrix m (rows [m * nrows / n_mat, ...)) uses weights m.
std::vector<uint8_t> encode(gk_type type, const std::vector<float> & x, int64_t ne0, int64_t nrows,
                            const importance * imp) {
    const size_t row_size = gk_row_size(type, ne0);
    std::vector<uint8_t> out(row_size * static_cast<size_t>(nrows));
    const int64_t n_mat         = imp ? imp->n_mat : 1;
    const int64_t rows_per_mat  = nrows / n_mat;
    for (int64_t m = 0; m < n_mat && ne0 > 0; ++m) {
        const float * w = imp ? imp->w.data() + m * ne0 : nullptr;
        if (gk::quant::quantize_rows(type, x.data() + m * rows_per_mat * ne0, out.data() + m * rows_per_mat * row_size,
                                     rows_per_mat, ne0, w) != row_size * static_cast<size_t>(rows_per_mat)) {
            fail(std::string("cannot encode ") + gk_type_name(type));
        }
    }
    return out;
}

struct totals {
    std::map<std::string, int> by_type;
    uint64_t    bytes_in  = 0;
    uint64_t    bytes_out = 0;
    double      worst     = 0;
    std::string worst_name;
};

// Re-encode or copy tensor `i` of `in` into `out`; prints its progress line.
void convert_tensor(const gk_gguf * in, int64_t i, gk_gguf * out, gk_type target, const imatrix * imat, totals & sum) {
    const std::string name   = gk_gguf_tensor_name(in, i);
    const gk_type     src    = gk_gguf_tensor_type(in, i);
    const uint32_t    n_dims = gk_gguf_tensor_n_dims(in, i);
    const int64_t *   ne     = gk_gguf_tensor_ne(in, i);
    const int64_t     nrows  = gk_gguf_tensor_nrows(in, i);

    std::string note;
    gk_type     type = GK_TYPE_F32;
    if (is_integer(src)) {
        type = src;
        note = "copied";
    } else if (is_weight_matrix(name, n_dims)) {
        type = choose_type(target, ne[0], note);
    } else {
        note = n_dims == 1 ? "kept: 1-D" : "kept: not a weight matrix";
    }

    const importance * imp = nullptr;
    if (imat && type != src && gk_is_quantized(type)) {
        imp = imat->find(name);
        if (!imp) {
            note += note.empty() ? "no imatrix entry" : "; no imatrix entry";
        } else if (imp->ne0 != ne[0] || nrows % imp->n_mat != 0) {
            fail("imatrix entry for " + name + " has " + std::to_string(imp->n_mat) + " x " + std::to_string(imp->ne0) +
                 " weights, which do not fit its shape");
        }
    }

    std::vector<uint8_t> bytes;
    std::vector<float>   x;  // the decoded original, when re-encoded
    if (type == src) {
        const auto * p = static_cast<const uint8_t *>(gk_gguf_tensor_data(in, i));
        bytes.assign(p, p + gk_gguf_tensor_size(in, i));
    } else {
        x = decode(in, i);
        if (type == GK_TYPE_F32) {
            bytes.resize(x.size() * sizeof(float));
            std::memcpy(bytes.data(), x.data(), bytes.size());
        } else {
            bytes = encode(type, x, ne[0], nrows, imp);
        }
    }
    gk_gguf_error e;
    check(gk_gguf_add_tensor(out, name.c_str(), type, n_dims, ne, bytes.data(), bytes.size(), &e), e,
          "cannot add " + name);
    const bool lossy = type != src && type != GK_TYPE_F32;
    double     err   = 0;
    if (lossy) {
        err = relative_rms_error(x, decode(out, gk_gguf_tensor_count(out) - 1));
        if (err > sum.worst || sum.worst_name.empty()) {
            sum.worst      = err;
            sum.worst_name = name;
        }
    }

    std::string shape = "[";
    for (uint32_t j = 0; j < n_dims; ++j) {
        shape += (j ? ", " : "") + std::to_string(ne[j]);
    }
    shape += "]";
    char errtext[64] = "";
    if (lossy) {
        std::snprintf(errtext, sizeof errtext, "  rel rms err %.4f%%", 100.0 * err);
    }
    std::printf("[%4" PRId64 "/%" PRId64 "] %-32s %-16s %6s -> %-7s %10" PRIu64 " -> %10zu bytes%s%s%s%s\n", i + 1,
                gk_gguf_tensor_count(in), name.c_str(), shape.c_str(), gk_type_name(src), gk_type_name(type),
                gk_gguf_tensor_size(in, i), bytes.size(), errtext, note.empty() ? "" : "  (", note.c_str(),
                note.empty() ? "" : ")");
    std::fflush(stdout);
    ++sum.by_type[gk_type_name(type)];
    sum.bytes_in += gk_gguf_tensor_size(in, i);
    sum.bytes_out += bytes.size();
}

void copy_metadata(const gk_gguf * in, gk_gguf * out, gk_type target) {
    gk_gguf_error e;
    for (int64_t i = 0; i < gk_gguf_kv_count(in); ++i) {
        check(gk_gguf_set_value(out, gk_gguf_kv_key(in, i), gk_gguf_kv_value(in, i), &e), e,
              std::string("cannot copy ") + gk_gguf_kv_key(in, i));
    }
    const int ftype = file_type_of(target);
    if (ftype >= 0) {
        check(gk_gguf_set_u32(out, "general.file_type", static_cast<uint32_t>(ftype), &e), e, "general.file_type");
        std::printf("general.file_type = %d\n", ftype);
    } else {
        if (gk_gguf_find_key(out, "general.file_type") >= 0) {
            check(gk_gguf_remove_key(out, "general.file_type", &e), e, "general.file_type");
        }
        std::printf("general.file_type: llama.cpp names no file type for %s; key left out\n", gk_type_name(target));
    }
}

// Refuse an output path that cannot be written, or that names the input, before any
// work is done (the file is written at the end, to a temporary file in the output's
// folder that is then renamed over it).
void check_output(const std::string & in_path, const std::string & out_path) {
    const fs::path  out(out_path);
    const fs::path  dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    std::error_code ec;
    if (fs::is_directory(out, ec)) {
        fail(out_path + ": is a directory");
    }
    if (!fs::is_directory(dir, ec)) {
        fail(out_path + ": no folder " + dir.string());
    }
    if (access(dir.c_str(), W_OK) != 0) {
        fail(out_path + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
    }
    if (fs::equivalent(in_path, out, ec)) {
        fail(out_path + ": is the input file; write the output to another path");
    }
}

int run(const std::string & in_path, const std::string & out_path, const std::string & type_name,
        const std::string & imatrix_path) {
    gk_type target;
    if (!gk_type_from_name(type_name.c_str(), &target)) {
        fail("unknown type '" + type_name + "'");
    }
    if (!is_weight_type(target)) {
        fail(std::string(gk_type_name(target)) + " is not a type for model weights");
    }
    if (target != GK_TYPE_F32 && !has_encoder(target)) {
        fail(std::string("no encoder for ") + gk_type_name(target));
    }
    check_output(in_path, out_path);
    imatrix imat;
    if (!imatrix_path.empty()) {
        std::string err;
        if (!imat.load(imatrix_path, err)) {
            fail(err);
        }
        std::printf("imatrix: %zu entries from %s\n", imat.size(), imatrix_path.c_str());
    }
    gk_gguf_error e;
    const context in(gk_gguf_open(in_path.c_str(), &e));
    if (!in) {
        fail(in_path + ": " + e.message);
    }
    const context out(gk_gguf_create());
    if (!out) {
        fail("out of memory");
    }
    copy_metadata(in.get(), out.get(), target);
    totals sum;
    for (int64_t i = 0; i < gk_gguf_tensor_count(in.get()); ++i) {
        convert_tensor(in.get(), i, out.get(), target, imatrix_path.empty() ? nullptr : &imat, sum);
    }
    check(gk_gguf_write(out.get(), out_path.c_str(), &e), e, "cannot write " + out_path);
    std::string types;
    for (const auto & [name, n] : sum.by_type) {
        types += (types.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    std::printf("wrote %s: %" PRId64 " tensors (%s), tensor data %" PRIu64 " -> %" PRIu64 " bytes", out_path.c_str(),
                gk_gguf_tensor_count(out.get()), types.c_str(), sum.bytes_in, sum.bytes_out);
    if (!sum.worst_name.empty()) {
        std::printf("; largest rel rms err %.4f%% (%s)", 100.0 * sum.worst, sum.worst_name.c_str());
    }
    std::printf("\n");
    return 0;
}

} // namespace

int main(int argc, char ** argv) {
    CLI::App app{"gk-quantize: re-encode a GGUF model's weight matrices to TYPE"};
    std::string in_path, out_path, type_name, imatrix_path;
    app.add_option("in", in_path, "input GGUF model")->required();
    app.add_option("out", out_path, "output GGUF file")->required();
    app.add_option("type", type_name, "target type (q8_0, q4_K, iq4_xs, ...)")->required();
    app.add_option("--imatrix", imatrix_path, "importance matrix (GGUF, as written by llama-imatrix)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError & e) {
        if (e.get_exit_code() == 0) {  // --help
            return app.exit(e);
        }
        std::fprintf(stderr, "gk-quantize: %s (see --help)\n", e.what());
        return 1;
    }
    try {
        return run(in_path, out_path, type_name, imatrix_path);
    } catch (const error & e) {
        std::fprintf(stderr, "gk-quantize: %s\n", e.message.c_str());
        return 1;
    }
}
