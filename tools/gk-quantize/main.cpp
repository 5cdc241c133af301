// gk-quantize - re-encode a GGUF model's weight matrices as llama-quantize does.
//
//   gk-quantize [options] IN.gguf OUT.gguf TYPE [NTHREADS]
//
// TYPE is one of llama-quantize's types (Q4_K_M, IQ4_XS, Q8_0, COPY, ... any case, or its
// llama_ftype number), whose per-tensor rules pick each matrix's type (plan.h), or a gk
// type name no such type has (q2_0, nvfp4), taken as --pure. Matrices whose rows are not
// whole blocks fall back (stated on their line). general.file_type records the mixture,
// or the type most matrices were written in when none could take the mixture's type;
// general.quantization_version is set. Every message goes to stderr, so OUT may be
// /dev/stdout or a pipe. Exit status 0 on success, 1 with one line `gk-quantize: message`
// on any error (usage included).
#include "imatrix.h"
#include "mixture.h"
#include "plan.h"

#include "gk/gguf.h"
#include "quant/codec.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// llama.cpp's GGML_QNT_VERSION, recorded as general.quantization_version.
constexpr uint32_t k_quantization_version = 2;

struct options {
    std::string in_path, out_path, type_name, imatrix_path, output_type, token_embd_type, n_threads_text;
    int         n_threads        = 0;
    bool        n_threads_given  = false;
    int         out_fd           = -1;  // OUT names this open descriptor (/dev/stdout): written through it
    bool        allow_requantize = false;
    bool        leave_output     = false;
    bool        pure             = false;
};

std::vector<float> decode(const gk_gguf * ctx, int64_t i) {
    std::vector<float> x(static_cast<size_t>(gk_gguf_tensor_nelements(ctx, i)));
    gk_gguf_error      err;
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
    const size_t         row_size = gk_row_size(type, ne0);
    std::vector<uint8_t> out(row_size * static_cast<size_t>(nrows));
    const int64_t        n_mat        = imp ? imp->n_mat : 1;
    const int64_t        rows_per_mat = nrows / n_mat;
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
    uint64_t                   bytes_in  = 0;
    uint64_t                   bytes_out = 0;
    double                     worst     = 0;
    std::string                worst_name;
};

// Re-encode or copy tensor `i` of `in` into `out` as `d` says; prints its progress line.
void convert_tensor(const gk_gguf * in, int64_t i, const decision & d, const importance * imp, const std::string & note,
                    gk_gguf * out, totals & sum) {
    const std::string name   = gk_gguf_tensor_name(in, i);
    const gk_type     src    = gk_gguf_tensor_type(in, i);
    const uint32_t    n_dims = gk_gguf_tensor_n_dims(in, i);
    const int64_t *   ne     = gk_gguf_tensor_ne(in, i);
    const int64_t     nrows  = gk_gguf_tensor_nrows(in, i);

    std::vector<uint8_t> bytes;
    std::vector<float>   x;  // the decoded original, when re-encoded
    if (!d.quantize) {
        const auto * p = static_cast<const uint8_t *>(gk_gguf_tensor_data(in, i));
        bytes.assign(p, p + gk_gguf_tensor_size(in, i));
    } else {
        x = decode(in, i);
        if (d.type == GK_TYPE_F32) {
            bytes.resize(x.size() * sizeof(float));
            std::memcpy(bytes.data(), x.data(), bytes.size());
        } else {
            bytes = encode(d.type, x, ne[0], nrows, imp);
        }
    }
    gk_gguf_error e;
    check(gk_gguf_add_tensor(out, name.c_str(), d.type, n_dims, ne, bytes.data(), bytes.size(), &e), e,
          "cannot add " + name);
    const bool lossy = d.quantize && d.type != GK_TYPE_F32;
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
    std::fprintf(stderr, "[%4" PRId64 "/%" PRId64 "] %-32s %-16s %6s -> %-7s %10" PRIu64 " -> %10zu bytes%s%s%s%s\n",
                 i + 1, gk_gguf_tensor_count(in), name.c_str(), shape.c_str(), gk_type_name(src), gk_type_name(d.type),
                 gk_gguf_tensor_size(in, i), bytes.size(), errtext, note.empty() ? "" : "  (", note.c_str(),
                 note.empty() ? "" : ")");
    ++sum.by_type[gk_type_name(d.type)];
    sum.bytes_in += gk_gguf_tensor_size(in, i);
    sum.bytes_out += bytes.size();
}

// Copy every pair, then record the file type and quantization version.
void write_metadata(const gk_gguf * in, gk_gguf * out, const settings & s, const std::vector<decision> & plan) {
    gk_gguf_error e;
    for (int64_t i = 0; i < gk_gguf_kv_count(in); ++i) {
        check(gk_gguf_set_value(out, gk_gguf_kv_key(in, i), gk_gguf_kv_value(in, i), &e), e,
              std::string("cannot copy ") + gk_gguf_kv_key(in, i));
    }
    if (s.copy) {
        std::fprintf(stderr, "general.file_type: copied from the input\n");
        return;
    }
    check(gk_gguf_set_u32(out, "general.quantization_version", k_quantization_version, &e), e,
          "general.quantization_version");
    const int ftype = recorded_file_type(s, plan);
    if (ftype < 0) {
        if (gk_gguf_find_key(out, "general.file_type") >= 0) {
            check(gk_gguf_remove_key(out, "general.file_type", &e), e, "general.file_type");
        }
        std::fprintf(stderr, "general.file_type: llama.cpp names no file type for %s; key left out\n",
                     gk_type_name(s.base));
        return;
    }
    check(gk_gguf_set_u32(out, "general.file_type", static_cast<uint32_t>(ftype), &e), e, "general.file_type");
    if (ftype == s.id) {
        std::fprintf(stderr, "general.file_type = %d (%s)\n", ftype, file_type_name(ftype));
    } else {
        std::fprintf(stderr, "general.file_type = %d (%s), not %d (%s): no matrix could be written in %s\n", ftype,
                     file_type_name(ftype), static_cast<int>(s.id), file_type_name(s.id), gk_type_name(s.base));
    }
}

// The descriptor OUT names when it is one of this process's (/dev/stdout, /dev/fd/N,
// /proc/self/fd/N); -1 otherwise.
int named_descriptor(const std::string & out_path) {
    if (out_path == "/dev/stdout") {
        return STDOUT_FILENO;
    }
    if (out_path == "/dev/stderr") {
        return STDERR_FILENO;
    }
    for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        if (out_path.starts_with(prefix)) {
            const char * p       = out_path.c_str() + prefix.size();
            const char * e       = out_path.c_str() + out_path.size();
            int          fd      = -1;
            const auto [end, ec] = std::from_chars(p, e, fd);
            return ec == std::errc() && end == e && p != e ? fd : -1;
        }
    }
    return -1;
}

// Refuse an output path that cannot be written, or that names the input, before any
// work is done; returns the descriptor to write through, or -1. A descriptor OUT names
// (/dev/stdout: a pipe, a device, or a file the shell opened with > or >>) is written
// through, at its position; another device or FIFO is written in place; a file is
// written through a temporary file in its folder, renamed over it at the end.
int check_output(const std::string & in_path, const std::string & out_path) {
    if (out_path.empty()) {
        fail("OUT is empty; name the output file");
    }
    std::error_code ec;
    if (fs::equivalent(in_path, out_path, ec)) {
        fail(out_path + ": is the input file; write the output to another path");
    }
    if (const int fd = named_descriptor(out_path); fd >= 0) {
        if (fd == STDERR_FILENO) {
            fail(out_path + ": the messages go to stderr; write the output elsewhere");
        }
        const int flags = fcntl(fd, F_GETFL);
        if (flags < 0) {
            fail(out_path + ": cannot write: " + std::strerror(errno));
        }
        if ((flags & O_ACCMODE) == O_RDONLY) {
            fail(out_path + ": cannot write: open for reading only");
        }
        return fd;
    }
    struct stat st {};
    if (stat(out_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            fail(out_path + ": is a directory");
        }
        if (access(out_path.c_str(), W_OK) != 0) {
            fail(out_path + ": cannot write: " + std::strerror(errno));
        }
        return -1;
    }
    if (out_path.ends_with('/')) {
        fail(out_path + ": is a directory");
    }
    fs::path out(out_path);
    if (fs::is_symlink(out, ec)) {
        out = fs::weakly_canonical(out, ec);
    }
    const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    if (!fs::is_directory(dir, ec)) {
        fail(out_path + ": no folder " + dir.string());
    }
    if (access(dir.c_str(), W_OK) != 0) {
        fail(out_path + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
    }
    return -1;
}

// NTHREADS, when given: a positive integer.
int parse_threads(const std::string & text) {
    int n               = 0;
    const auto [end, e] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (e != std::errc() || end != text.data() + text.size() || n < 1) {
        fail("nthreads: '" + text + "' is not a positive integer");
    }
    return n;
}

// A ggml type name given to --output-tensor-type / --token-embedding-type.
gk_type parse_tensor_type(const std::string & name, const char * option) {
    gk_type t;
    if (name.empty()) {
        return GK_TYPE_COUNT;
    }
    if (!gk_type_from_name(name.c_str(), &t) || !is_weight_type(t)) {
        fail(std::string(option) + ": '" + name + "' is not a type for model weights");
    }
    return t;
}

// The mixture TYPE names, or a plain gk type taken as --pure.
settings parse_settings(const options & o) {
    settings s;
    if (const mixture * m = find_mixture(o.type_name)) {
        s.id   = m->id;
        s.base = m->base;
        s.copy = m->copy;
        s.pure = o.pure;
    } else {
        gk_type t;
        if (!gk_type_from_name(o.type_name.c_str(), &t)) {
            fail("unknown type '" + o.type_name + "' (see --help for the list)");
        }
        if (!is_weight_type(t)) {
            fail(std::string(gk_type_name(t)) + " is not a type for model weights");
        }
        s.id   = static_cast<ftype>(file_type_of(t));
        s.base = t;
        s.pure = true;
    }
    s.leave_output    = o.leave_output;
    s.has_imatrix     = !o.imatrix_path.empty();
    s.output_type     = parse_tensor_type(o.output_type, "--output-tensor-type");
    s.token_embd_type = parse_tensor_type(o.token_embd_type, "--token-embedding-type");
    return s;
}

// Refusals that need the plan, before any tensor is written: a quantized source without
// --allow-requantize, a very low-bit type without importance weights, a type without
// encoder, importance weights that do not fit.
void check_plan(const gk_gguf * in, const std::vector<decision> & plan, const settings & s, const options & o,
                const imatrix * imat) {
    for (int64_t i = 0; i < gk_gguf_tensor_count(in); ++i) {
        const decision &  d    = plan[static_cast<size_t>(i)];
        const std::string name = gk_gguf_tensor_name(in, i);
        const gk_type     src  = gk_gguf_tensor_type(in, i);
        if (!d.quantize) {
            continue;
        }
        if (gk_is_quantized(src) && !o.allow_requantize) {
            fail(name + ": requantizing from " + gk_type_name(src) +
                 " is disabled; pass --allow-requantize "
                 "(quality suffers against quantizing from f16 or f32)");
        }
        if (d.type != GK_TYPE_F32 && !has_encoder(d.type)) {
            fail(name + ": no encoder for " + gk_type_name(d.type));
        }
        const importance * imp = imat ? imat->find(name) : nullptr;
        if (needs_imatrix(d.type, name, s.id) && !imp) {
            fail(name + ": " + gk_type_name(d.type) + " needs importance weights (--imatrix" +
                 (imat ? " has none for it" : "") + "); without them the result is garbage");
        }
        const int64_t * ne = gk_gguf_tensor_ne(in, i);
        if (imp && (imp->ne0 != ne[0] || gk_gguf_tensor_nrows(in, i) % imp->n_mat != 0)) {
            fail("imatrix entry for " + name + " has " + std::to_string(imp->n_mat) + " x " + std::to_string(imp->ne0) +
                 " weights, which do not fit its shape");
        }
    }
}

int run(options & o) {
    if (o.n_threads_given) {
        o.n_threads = parse_threads(o.n_threads_text);
    }
    o.out_fd         = check_output(o.in_path, o.out_path);
    const settings s = parse_settings(o);
    if (o.n_threads > 1) {
        std::fprintf(stderr, "gk-quantize: runs on one thread; nthreads %d is not used\n", o.n_threads);
    }
    imatrix imat;
    if (!o.imatrix_path.empty()) {
        std::string err;
        if (!imat.load(o.imatrix_path, err)) {
            fail(err);
        }
        std::fprintf(stderr, "imatrix: %zu entries from %s\n", imat.size(), o.imatrix_path.c_str());
    }
    gk_gguf_error e;
    const context in(gk_gguf_open(o.in_path.c_str(), &e));
    if (!in) {
        fail(o.in_path + ": " + e.message);
    }
    std::vector<tensor_desc> tensors;
    for (int64_t i = 0; i < gk_gguf_tensor_count(in.get()); ++i) {
        tensor_desc t;
        t.name   = gk_gguf_tensor_name(in.get(), i);
        t.n_dims = gk_gguf_tensor_n_dims(in.get(), i);
        std::copy(gk_gguf_tensor_ne(in.get(), i), gk_gguf_tensor_ne(in.get(), i) + 4, t.ne);
        t.type = gk_gguf_tensor_type(in.get(), i);
        tensors.push_back(std::move(t));
    }
    std::vector<decision> decisions;
    try {
        // Only the per-tensor rules read the model's metadata.
        model_info m;
        if (s.copy || s.pure || !gk_is_quantized(s.base)) {
            m.has_output = gk_gguf_find_tensor(in.get(), "output.weight") >= 0;
        } else {
            m = read_model_info(in.get());
        }
        decisions = plan(s, m, tensors);
    } catch (const std::invalid_argument & x) {
        fail(o.in_path + ": " + x.what());
    }
    const imatrix * im = o.imatrix_path.empty() ? nullptr : &imat;
    check_plan(in.get(), decisions, s, o, im);

    const context out(gk_gguf_create());
    if (!out) {
        fail("out of memory");
    }
    std::fprintf(stderr, "quantizing %s as %s%s\n", o.in_path.c_str(), o.type_name.c_str(),
                 s.pure && !s.copy ? " (pure)" : "");
    write_metadata(in.get(), out.get(), s, decisions);
    totals sum;
    for (int64_t i = 0; i < gk_gguf_tensor_count(in.get()); ++i) {
        const decision &   d       = decisions[static_cast<size_t>(i)];
        const bool         weighed = im && d.quantize && gk_is_quantized(d.type);
        const importance * imp     = weighed ? im->find(tensors[i].name) : nullptr;
        std::string        note    = d.why;
        if (weighed && !imp) {
            note += (note.empty() ? "" : "; ") + std::string("no imatrix entry");
        }
        convert_tensor(in.get(), i, d, imp, note, out.get(), sum);
    }
    const gk_gguf_status written = o.out_fd >= 0 ? gk_gguf_write_fd(out.get(), o.out_fd, o.out_path.c_str(), &e)
                                                 : gk_gguf_write(out.get(), o.out_path.c_str(), &e);
    if (written != GK_GGUF_OK) {
        fail(e.message);  // names the file and the system's reason
    }
    std::string types;
    for (const auto & [name, n] : sum.by_type) {
        types += (types.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    std::fprintf(stderr, "wrote %s: %" PRId64 " tensors (%s), tensor data %" PRIu64 " -> %" PRIu64 " bytes",
                 o.out_path.c_str(), gk_gguf_tensor_count(out.get()), types.c_str(), sum.bytes_in, sum.bytes_out);
    if (!sum.worst_name.empty()) {
        std::fprintf(stderr, "; largest rel rms err %.4f%% (%s)", 100.0 * sum.worst, sum.worst_name.c_str());
    }
    std::fprintf(stderr, "\n");
    return 0;
}

// llama-quantize's options that gk-quantize does not take, refused by name.
struct unsupported_option {
    const char * name;
    const char * why;
};

constexpr unsupported_option k_unsupported[] = {
    {"--tensor-type", "no per-tensor type overrides; --output-tensor-type and --token-embedding-type are taken"},
    {"--tensor-type-file", "no per-tensor type overrides"},
    {"--include-weights", "the imatrix applies to every tensor it has an entry for"},
    {"--exclude-weights", "the imatrix applies to every tensor it has an entry for"},
    {"--prune-layers", "layers are not removed"},
    {"--override-kv", "metadata is copied as stored"},
    {"--keep-split", "split models are not read or written"},
    {"--dry-run", "every run writes OUT"},
};

// The options gk-quantize takes (CLI11 parses them) and whether they take a value.
constexpr std::pair<const char *, bool> k_options[] = {
    {"--imatrix", true},
    {"--allow-requantize", false},
    {"--leave-output-tensor", false},
    {"--pure", false},
    {"--output-tensor-type", true},
    {"--token-embedding-type", true},
    {"--help", false},
    {"-h", false},
};

// Refuse, naming it, an option of llama-quantize's that is not taken or an unknown one,
// wherever it stands; CLI11 would take it for a positional.
void check_option_names(int argc, char ** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            return;
        }
        if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1]))) {
            continue;  // a positional, or a number (NTHREADS, checked later)
        }
        const std::string name  = arg.substr(0, arg.find('='));
        bool              known = false;
        for (const auto & [opt, value] : k_options) {
            if (name == opt) {
                known = true;
                i += value && name == arg ? 1 : 0;  // skip its value
            }
        }
        for (const unsupported_option & u : k_unsupported) {
            if (name == u.name) {
                fail("option " + name + " is not supported (" + u.why + ")");
            }
        }
        if (!known) {
            fail("unknown option " + name + " (see --help)");
        }
    }
}

std::string type_list() {
    std::string text = "\nTYPE (any case, or the number):\n";
    for (const mixture & m : mixtures()) {
        char         line[200];
        const char * need = mixture_needs_imatrix(m) ? "; needs an imatrix" : "";
        if (m.copy) {
            std::snprintf(line, sizeof line, "          %-9s : %s%s\n", m.name, m.description, need);
        } else {
            std::snprintf(line, sizeof line, "  %2d  or  %-9s : %s%s\n", static_cast<int>(m.id), m.name, m.description,
                          need);
        }
        text += line;
    }
    text += "  or a gk type name none of these has (q2_0, nvfp4, ...): every matrix that type, as --pure\n";
    text +=
        "\nWithout --imatrix, these matrix types are refused (a type above needs an imatrix when its rules\n"
        "give some matrix one of them):\n  " +
        imatrix_needs_text() + "\n";
    std::string names;
    for (const unsupported_option & u : k_unsupported) {
        names += (names.empty() ? "" : ", ") + std::string(u.name);
    }
    text += "\nllama-quantize options not taken:\n  " + names + "\n";
    return text;
}

}  // namespace

int main(int argc, char ** argv) {
    CLI::App app{"gk-quantize: re-encode a GGUF model's weight matrices as llama-quantize does", "gk-quantize"};
    options  o;
    app.add_option("in", o.in_path, "input GGUF model")->required();
    app.add_option("out", o.out_path, "output GGUF file (/dev/stdout is written through: > truncates, >> appends)")
        ->required();
    app.add_option("type", o.type_name, "quantization type (see the list below)")->required();
    CLI::Option * threads = app.add_option(
        "nthreads", o.n_threads_text,
        "a positive integer, accepted for llama-quantize's command line; gk-quantize uses one thread");
    app.add_option("--imatrix", o.imatrix_path, "importance matrix (GGUF, as written by llama-imatrix)");
    app.add_flag("--allow-requantize", o.allow_requantize,
                 "allow re-encoding tensors that are already quantized (quality suffers against f16/f32 sources)");
    app.add_flag("--leave-output-tensor", o.leave_output, "copy output.weight as stored");
    app.add_flag("--pure", o.pure, "no per-tensor rules: every matrix gets TYPE's default type");
    app.add_option("--output-tensor-type", o.output_type, "type of output.weight (a ggml type name: q8_0, f16, ...)");
    app.add_option("--token-embedding-type", o.token_embd_type, "type of token_embd.weight (a ggml type name)");
    app.footer(type_list());
    try {
        check_option_names(argc, argv);
    } catch (const error & e) {
        std::fprintf(stderr, "gk-quantize: %s\n", e.message.c_str());
        return 1;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError & e) {
        if (e.get_exit_code() == 0) {  // --help
            return app.exit(e);
        }
        std::fprintf(stderr, "gk-quantize: %s (see --help)\n", e.what());
        return 1;
    }
    o.n_threads_given = threads->count() > 0;
    // A reader that goes away (`gk-quantize ... /dev/stdout q8_0 | head -c 10`) is a failed
    // write, reported as any other, not a silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    try {
        return run(o);
    } catch (const error & e) {
        std::fprintf(stderr, "gk-quantize: %s\n", e.message.c_str());
        return 1;
    }
}
