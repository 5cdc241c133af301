// codec-cli - a thin command-line face of the codec for the Python reference tests.
//
//   codec-cli decode TYPE IN.bin OUT.f32 N_PER_ROW   rows of blocks -> f32 (little-endian)
//   codec-cli encode TYPE IN.f32 OUT.bin N_PER_ROW [IMATRIX.f32]
//
// Exit status 0 on success, 2 with a message on any error.
#include "quant/codec.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

bool read_file(const char * path, std::vector<char> & out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        return false;
    }
    out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return true;
}

bool write_file(const char * path, const void * data, size_t n) {
    std::ofstream f(path, std::ios::binary);
    f.write(static_cast<const char *>(data), static_cast<std::streamsize>(n));
    return static_cast<bool>(f);
}

int fail(const std::string & msg) {
    std::fprintf(stderr, "codec-cli: %s\n", msg.c_str());
    return 2;
}

} // namespace

int main(int argc, char ** argv) {
    if (argc < 6) {
        return fail("usage: codec-cli decode|encode TYPE IN OUT N_PER_ROW [IMATRIX]");
    }
    const std::string mode = argv[1];
    gk_type type;
    if (!gk_type_from_name(argv[2], &type)) {
        return fail(std::string("unknown type ") + argv[2]);
    }
    const long long n_per_row = std::atoll(argv[5]);
    if (n_per_row <= 0 || !gk_row_len_ok(type, n_per_row)) {
        return fail("row length is not a whole number of blocks");
    }
    std::vector<char> in;
    if (!read_file(argv[3], in)) {
        return fail(std::string("cannot read ") + argv[3]);
    }
    const size_t row_size = gk_row_size(type, n_per_row);
    if (mode == "decode") {
        if (in.size() % row_size != 0) {
            return fail("input is not a whole number of rows");
        }
        const int64_t nrows = static_cast<int64_t>(in.size() / row_size);
        std::vector<float> out(static_cast<size_t>(nrows * n_per_row));
        if (!gk::quant::dequantize_rows(type, in.data(), out.data(), nrows, n_per_row)) {
            return fail(std::string("no decoder for ") + argv[2]);
        }
        return write_file(argv[4], out.data(), out.size() * sizeof(float)) ? 0 : fail("write failed");
    }
    if (mode == "encode") {
        const size_t row_bytes = static_cast<size_t>(n_per_row) * sizeof(float);
        if (in.size() % row_bytes != 0) {
            return fail("input is not a whole number of f32 rows");
        }
        const int64_t nrows = static_cast<int64_t>(in.size() / row_bytes);
        std::vector<float> src(in.size() / sizeof(float));
        std::memcpy(src.data(), in.data(), in.size());
        std::vector<float> imatrix;
        if (argc > 6) {
            std::vector<char> im;
            if (!read_file(argv[6], im) || im.size() != row_bytes) {
                return fail("imatrix must hold N_PER_ROW f32 values");
            }
            imatrix.resize(static_cast<size_t>(n_per_row));
            std::memcpy(imatrix.data(), im.data(), im.size());
        }
        std::vector<uint8_t> out(row_size * static_cast<size_t>(nrows));
        const size_t n = gk::quant::quantize_rows(type, src.data(), out.data(), nrows, n_per_row,
                                                  imatrix.empty() ? nullptr : imatrix.data());
        if (n != out.size()) {
            return fail(std::string("no encoder for ") + argv[2]);
        }
        return write_file(argv[4], out.data(), out.size()) ? 0 : fail("write failed");
    }
    return fail("unknown mode " + mode);
}
