// gk-gguf - look inside a GGUF file.
//
//   gk-gguf FILE               header, every key/value (long arrays abbreviated), every
//                              tensor (name, type, shape, offset, bytes), totals by type
//   gk-gguf --json FILE        the same as one JSON object, arrays in full
//   gk-gguf --check FILE       decode every tensor; count NaN and Inf
//   gk-gguf --dump NAME FILE   tensor NAME decoded to f32, raw little-endian, on stdout
//
// Exit status: 0 on success; 1 with one line on stderr when the file cannot be read
// (or an argument is bad); 2 when --check finds NaN/Inf or a tensor it cannot decode.
#include "listing.h"

#include <CLI/CLI.hpp>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace gk_gguf_tool;

constexpr int64_t k_chunk_floats = int64_t{1} << 22;  // decode at most this many values at once

struct closer {
    void operator()(gk_gguf * ctx) const { gk_gguf_free(ctx); }
};

int fail(const std::string & path, const std::string & msg) {
    std::fprintf(stderr, "gk-gguf: %s: %s\n", path.c_str(), msg.c_str());
    return 1;
}

// Decode tensor `i` chunk by chunk, handing each chunk of floats to `f`; returns the
// status of the first failing chunk.
template <class F>
gk_gguf_status for_each_chunk(const gk_gguf * ctx, int64_t i, gk_gguf_error & err, F && f) {
    const int64_t ne0   = gk_gguf_tensor_ne(ctx, i)[0];
    const int64_t nrows = gk_gguf_tensor_nrows(ctx, i);
    const int64_t step  = std::max<int64_t>(1, k_chunk_floats / std::max<int64_t>(ne0, 1));
    std::vector<float> buf;
    for (int64_t r = 0; r < nrows && ne0 > 0; r += step) {
        const int64_t n = std::min(step, nrows - r);
        buf.resize(static_cast<size_t>(n * ne0));
        const gk_gguf_status s = gk_gguf_tensor_to_f32(ctx, i, r, n, buf.data(), &err);
        if (s != GK_GGUF_OK) {
            return s;
        }
        f(buf);
    }
    return GK_GGUF_OK;
}

struct finite_count {
    int64_t nan = 0;
    int64_t inf = 0;
};

int check(const gk_gguf * ctx, const std::string & path, bool json) {
    nlohmann::json report = json ? listing_json(ctx, path) : nlohmann::json();
    if (!json) {
        std::printf("%s\n", header_text(ctx, path).c_str());
    }
    finite_count total;
    int64_t undecodable = 0;
    int64_t values      = 0;
    for (int64_t i = 0; i < gk_gguf_tensor_count(ctx); ++i) {
        const char * name = gk_gguf_tensor_name(ctx, i);
        const char * type = gk_type_name(gk_gguf_tensor_type(ctx, i));
        finite_count c;
        gk_gguf_error err;
        const gk_gguf_status s = for_each_chunk(ctx, i, err, [&](const std::vector<float> & buf) {
            for (float x : buf) {
                c.nan += std::isnan(x);
                c.inf += std::isinf(x);
            }
        });
        nlohmann::json * entry = json ? &report["tensors"][static_cast<size_t>(i)] : nullptr;
        if (s != GK_GGUF_OK) {
            ++undecodable;
            if (json) {
                (*entry)["error"] = err.message;
            } else {
                std::printf("  %-40s %-8s %s\n", name, type, err.message);
            }
            continue;
        }
        values += gk_gguf_tensor_nelements(ctx, i);
        total.nan += c.nan;
        total.inf += c.inf;
        if (json) {
            (*entry)["nan"] = c.nan;
            (*entry)["inf"] = c.inf;
        } else {
            std::printf("  %-40s %-8s %12" PRId64 " values %8" PRId64 " NaN %8" PRId64 " Inf%s\n", name, type,
                        gk_gguf_tensor_nelements(ctx, i), c.nan, c.inf, c.nan || c.inf ? "  <-" : "");
        }
    }
    const bool ok = undecodable == 0 && total.nan == 0 && total.inf == 0;
    if (json) {
        report["check"] = {{"ok", ok},       {"values", values}, {"nan", total.nan},
                           {"inf", total.inf}, {"undecodable", undecodable}};
        std::printf("%s\n", report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::printf("check: %" PRId64 " tensors, %" PRId64 " values decoded, %" PRId64 " NaN, %" PRId64 " Inf, %" PRId64
                    " tensors not decodable: %s\n",
                    gk_gguf_tensor_count(ctx), values, total.nan, total.inf, undecodable, ok ? "ok" : "FAILED");
    }
    return ok ? 0 : 2;
}

int dump(const gk_gguf * ctx, const std::string & path, const std::string & name) {
    const int64_t i = gk_gguf_find_tensor(ctx, name.c_str());
    if (i < 0) {
        return fail(path, "no tensor named '" + name + "'");
    }
    gk_gguf_error err;
    bool written = true;
    const gk_gguf_status s = for_each_chunk(ctx, i, err, [&](const std::vector<float> & buf) {
        written = written && std::fwrite(buf.data(), sizeof(float), buf.size(), stdout) == buf.size();
    });
    if (s != GK_GGUF_OK) {
        return fail(path, name + ": " + err.message);
    }
    if (!written || std::fflush(stdout) != 0) {
        return fail(path, "cannot write to stdout");
    }
    return 0;
}

/** rc, or 1 with a message when what was written to stdout did not all arrive (a full
 *  disk, /dev/full, a closed pipe). */
int checked_stdout(int rc) {
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "gk-gguf: writing standard output failed\n");
        return 1;
    }
    return rc;
}

int run(int argc, char ** argv) {
    CLI::App app{"gk-gguf: list, check and dump GGUF files"};
    std::string path;
    std::string dump_name;
    bool json = false;
    bool check_all = false;
    app.add_option("file", path, "GGUF file")->required();
    CLI::Option * json_opt  = app.add_flag("--json", json, "print the listing (and --check results) as JSON");
    CLI::Option * check_opt = app.add_flag("--check", check_all, "decode every tensor and count NaN/Inf");
    CLI::Option * dump_opt =
        app.add_option("--dump", dump_name, "write tensor NAME decoded to f32 (raw little-endian) to stdout")
            ->excludes(json_opt)
            ->excludes(check_opt);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError & e) {
        if (e.get_exit_code() == 0) {  // --help
            return app.exit(e);
        }
        std::fprintf(stderr, "gk-gguf: %s (see --help)\n", e.what());
        return 1;
    }

    gk_gguf_error err;
    std::unique_ptr<gk_gguf, closer> ctx(gk_gguf_open(path.c_str(), &err));
    if (!ctx) {
        return fail(path, err.message);
    }
    if (dump_opt->count() > 0) {
        return dump(ctx.get(), path, dump_name);
    }
    if (check_all) {
        return check(ctx.get(), path, json);
    }
    if (json) {
        std::printf("%s\n",
                    listing_json(ctx.get(), path).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    print_listing(stdout, ctx.get(), path);
    return 0;
}

} // namespace

int main(int argc, char ** argv) { return checked_stdout(run(argc, argv)); }
