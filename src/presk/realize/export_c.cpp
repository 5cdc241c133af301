// The C program of an entry: a recording of its launches (the executor's hook), turned into
// main.c; the kernels and pmath beside it; a Makefile.
#include "realize/export_c.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "../../quant/fp16.h"
#include "kernel/c_print.h"
#include "kernel/native.h"
#include "lang/source.h"

namespace presk::realize {
namespace {

using kernel::DType;

/// The bytes of `d`'s elements in its storage type, as a compiled kernel reads them
/// (kernel/native.h), prefixed by the type's name (a key: equal keys, equal buffers).
std::string typed_key(const kernel::Data& d) {
    std::string b = kernel::dtype_name(d.dtype());
    b += ':';
    b.append(static_cast<const char*>(d.raw()), kernel::bytes_of(d.dtype(), d.size()));
    return b;
}


/// A buffer of the program: written by a launch, or embedded (its bits in main.c).
struct Buffer {
    DType dtype = DType::F64;
    int64_t n = 0;
    std::string bits;   // embedded: the elements' bytes
    int written = -1;   // the launch that writes it, or -1 when embedded
    int last = -1;      // the last launch that reads it; INT32_MAX when printed
};

struct Launched {
    size_t kernel = 0;
    std::vector<size_t> in;
    size_t out = 0;
};

/// The launches of one run, their buffers and the distinct kernels.
class Recording {
public:
    std::vector<Buffer> bufs;
    std::vector<kernel::Kernel> kernels;
    std::vector<Launched> launches;

    void launch(const kernel::Kernel& k, const std::vector<const kernel::Data*>& in, const kernel::Data& out) {
        const std::string text = kernel::to_string(k);
        auto [it, fresh] = kernel_of_.emplace(text, kernels.size());
        if (fresh) kernels.push_back(k);
        Launched l;
        l.kernel = it->second;
        const int at = (int)launches.size();
        for (const kernel::Data* d : in) l.in.push_back(read(*d, at));
        std::string key = typed_key(out);
        Buffer b;
        b.dtype = out.dtype();
        b.n = out.size();
        b.written = at;
        l.out = bufs.size();
        by_bits_[std::move(key)] = bufs.size();
        bufs.push_back(std::move(b));
        launches.push_back(std::move(l));
    }

    /// The buffer holding `d`'s bits that launch `at` reads (or, at INT32_MAX, the printing):
    /// the latest with those bits, else `d` embedded.
    size_t read(const kernel::Data& d, int at) {
        std::string key = typed_key(d);
        auto it = by_bits_.find(key);
        size_t id;
        if (it != by_bits_.end()) {
            id = it->second;
        } else {
            Buffer b;
            b.dtype = d.dtype();
            b.n = d.size();
            b.bits = key.substr(key.find(':') + 1);
            id = bufs.size();
            bufs.push_back(std::move(b));
            by_bits_.emplace(std::move(key), id);
        }
        bufs[id].last = std::max(bufs[id].last, at);
        return id;
    }

private:
    std::map<std::string, size_t> kernel_of_;
    std::unordered_map<std::string, size_t> by_bits_;
};

/// `s` as the inside of a C string literal (no trigraph, no byte read as an escape's digit).
std::string c_string(const std::string& s) {
    std::string r;
    for (char ch : s) {
        const auto u = (unsigned char)ch;
        if (ch == '"' || ch == '\\' || ch == '?') {
            r += '\\';
            r += ch;
        } else if (ch == '\n') {
            r += "\\n";
        } else if (u < 0x20 || u >= 0x7f) {
            const char oct[] = {'\\', (char)('0' + (u >> 6)), (char)('0' + ((u >> 3) & 7)), (char)('0' + (u & 7)), 0};
            r += oct;
        } else {
            r += ch;
        }
    }
    return r;
}

/// `s` safe inside a // comment: printable ASCII, no "??" (trigraphs), no trailing backslash.
std::string c_comment(const std::string& s) {
    std::string r;
    for (char ch : s) r += (unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f ? '?' : ch;
    for (size_t q; (q = r.find("??")) != std::string::npos;) r.replace(q, 2, "? ?");
    if (!r.empty() && r.back() == '\\') r += '.';
    return r;
}

/// A C-file-safe spelling of `name`: letters, digits and '_' kept, runs of others one '_'.
std::string program_name(const std::string& name) {
    std::string r;
    for (char ch : name) {
        if (std::isalnum((unsigned char)ch) || ch == '_') r += ch;
        else if (!r.empty() && r.back() != '_') r += '_';
    }
    while (!r.empty() && r.back() == '_') r.pop_back();
    if (r.empty() || r == "clean" || r == "main" || r == "pmath" || r.rfind("kernel", 0) == 0) r = "entry_" + r;
    return r;
}

std::string hex_word(const char* p, size_t size) {
    uint64_t v = 0;
    std::memcpy(&v, p, size);  // little-endian hosts: the low bytes
    static const char d[] = "0123456789abcdef";
    std::string s((size_t)size * 2, '0');
    for (size_t i = s.size(); i-- > 0; v >>= 4) s[i] = d[v & 15];
    return "0x" + s;
}

/// The embedded buffer `id` as a static array of its element bits (a quantised one's blocks
/// as bytes).
std::string data_array(size_t id, const Buffer& b) {
    static const char* types[] = {"uint64_t", "uint32_t", "uint16_t", "int64_t", "uint8_t"};
    const bool blocks = kernel::quantised(b.dtype);
    const size_t e = blocks ? 1 : kernel::element_size(b.dtype);
    const int64_t n = blocks ? (int64_t)b.bits.size() : b.n;
    const int ti = blocks ? 4 : b.dtype == DType::F64 ? 0 : b.dtype == DType::F32 ? 1 : b.dtype == DType::BF16 ? 2 : 3;
    std::string s = std::string("static const ") + types[ti] + " d" + std::to_string(id) + "[" +
                    std::to_string(std::max<int64_t>(n, 1)) + "] = {";
    for (int64_t j = 0; j < n; ++j) {
        s += j % 8 ? " " : "\n    ";
        const char* p = b.bits.data() + (size_t)j * e;
        if (b.dtype == DType::I64) {
            int64_t v;
            std::memcpy(&v, p, 8);
            s += v == INT64_MIN ? "INT64_MIN" : "INT64_C(" + std::to_string(v) + ")";
        } else {
            s += (b.dtype == DType::F64 ? "UINT64_C(" : "") + hex_word(p, e) + (b.dtype == DType::F64 ? ")" : "");
        }
        s += ",";
    }
    return s + (n ? "\n};\n" : "0};\n");
}

// What main.c defines before main: allocation, the launch and its failure, the element texts.
const char* kMainHelpers = R"c(
/* n elements of size bytes, or an exit with a message. */
static void* alloc(int64_t n, size_t size) {
    void* p = malloc(n > 0 ? (size_t)n * size : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", PROGRAM);
        exit(1);
    }
    return p;
}

/* A buffer holding the n elements of size bytes at p (embedded data: reals by their bits). */
static void* copy_buffer(const void* p, int64_t n, size_t size) {
    void* b = alloc(n, size);
    memcpy(b, p, n > 0 ? (size_t)n * size : 0);
    return b;
}

typedef int (*kernel_fn)(void* const* bufs, int64_t lo, int64_t hi, int64_t* err);

static void launch(kernel_fn f, void* const* bufs, int64_t lo, int64_t hi, const char* kernel) {
    int64_t err[3] = {0, 0, 0};
    const int status = f(bufs, lo, hi, err);
    if (status != 0) {
        fprintf(stderr, "%s: kernel %s failed with status %d (%" PRId64 ", %" PRId64 ", %" PRId64 ")\n", PROGRAM, kernel,
                status, err[0], err[1], err[2]);
        exit(1);
    }
}

/* An element as presk run prints it: %.*g of the exact value, nan, inf, -inf. */
static void put_real(double x) {
    if (x != x) fputs("nan", stdout);
    else if (x > DBL_MAX) fputs("inf", stdout);
    else if (x < -DBL_MAX) fputs("-inf", stdout);
    else printf("%.*g", DIGITS, x);
}

enum { F64, F32, BF16, I64 };

static void put_element(const void* b, int type, int64_t k) {
    switch (type) {
    case F64: put_real(((const double*)b)[k]); break;
    case F32: put_real(((const float*)b)[k]); break;
    case BF16: {
        const uint32_t u = (uint32_t)((const uint16_t*)b)[k] << 16;
        float f;
        memcpy(&f, &u, 4);
        put_real(f);
        break;
    }
    default: printf("%" PRId64, ((const int64_t*)b)[k]);
    }
}

/* The elements in nested brackets, one level per axis. */
static void put_axes(const void* b, int type, const int64_t* shape, int rank, int axis, int64_t* k) {
    if (axis == rank) {
        put_element(b, type, (*k)++);
        return;
    }
    putchar('[');
    for (int64_t i = 0; i < shape[axis]; ++i) {
        if (i) fputs(", ", stdout);
        put_axes(b, type, shape, rank, axis + 1, k);
    }
    putchar(']');
}

static void put_tensor(const void* b, int type, const int64_t* shape, int rank) {
    int64_t k = 0;
    put_axes(b, type, shape, rank, 0, &k);
}
)c";

/// The statements printing value `v` (a component of the output) as ref/print.h's writer does.
void print_value(std::string& c, std::string& text, const Value& v, Recording& rec) {
    auto flush = [&] {
        if (!text.empty()) c += "    fputs(\"" + c_string(text) + "\", stdout);\n";
        text.clear();
    };
    if (v.t) {
        text += to_string(*v.type) + " = ";
        flush();
        const size_t id = rec.read(*v.t, INT32_MAX);
        static const char* types[] = {"F64", "F32", "BF16", "I64"};
        const int ti = v.t->dtype() == DType::F64 ? 0 : v.t->dtype() == DType::F32 ? 1 : v.t->dtype() == DType::BF16 ? 2 : 3;
        std::string shape;
        for (const Axis& a : v.type->axes) shape += (shape.empty() ? "" : ", ") + std::to_string(a.size);
        if (shape.empty()) {
            c += "    put_tensor(b[" + std::to_string(id) + "], " + types[ti] + ", NULL, 0);\n";
        } else {
            c += "    {\n        static const int64_t shape[] = {" + shape + "};\n        put_tensor(b[" + std::to_string(id) +
                 "], " + types[ti] + ", shape, " + std::to_string(v.type->axes.size()) + ");\n    }\n";
        }
        return;
    }
    const bool record = v.type->kind == Type::Record;
    text += record ? "{" : "(";
    for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) text += ",\n ";
        if (record) text += v.type->names[i] + ": ";
        print_value(c, text, v.items[i], rec);
    }
    text += record ? "}" : ")";
}

} // namespace

CExport export_c(const core::Program& p, const Realization& r, const std::vector<ref::Value>& args, ExecOptions o,
                 const std::string& name, int digits) {
    Recording rec;
    o.on_launch = [&](const kernel::Kernel& k, const std::vector<const kernel::Data*>& in, const kernel::Data& out) {
        rec.launch(k, in, out);
    };
    Executor ex(p, r, o);
    const std::vector<Value> in = ex.convert_args(p.entry, args);
    const Value out = ex.call_values(p.entry, in);
    CExport x;
    x.name = program_name(name);
    x.kernels = (int64_t)rec.kernels.size();
    x.launches = (int64_t)rec.launches.size();

    // The printing first: it may embed values no launch made (an output that is an input).
    std::string print, text;
    const std::vector<Value> parts = out.type->kind == Type::Tuple ? out.items : std::vector<Value>{out};
    for (size_t i = 0; i < parts.size(); ++i) {
        text += "out" + std::to_string(i) + " : ";
        print_value(print, text, parts[i], rec);
        text += "\n";
    }
    if (!text.empty()) print += "    fputs(\"" + c_string(text) + "\", stdout);\n";

    std::string m = "// " + c_comment(x.name) + ": the entry " + c_comment(p.entry) + " in realization " +
                    c_comment(r.spelling) +
                    ", exported by presk export --target c (docs/presk.md, \"presk export\"): its kernels'\n"
                    "// launches as one run on the kernel backend made them, then its outputs printed as presk run "
                    "prints them.\n"
                    "#include <float.h>\n#include <inttypes.h>\n#include <stdint.h>\n#include <stdio.h>\n#include "
                    "<stdlib.h>\n#include <string.h>\n\n";
    m += "#define PROGRAM \"" + c_string(x.name) + "\"\n#define DIGITS " + std::to_string(digits) + "\n\n";
    for (size_t i = 0; i < rec.kernels.size(); ++i)
        m += "int presk_kernel" + std::to_string(i) + "(void* const* bufs, int64_t lo, int64_t hi, int64_t* err);\n";
    m += kMainHelpers;
    m += "\n";
    for (size_t id = 0; id < rec.bufs.size(); ++id)
        if (rec.bufs[id].written < 0) m += data_array(id, rec.bufs[id]);
    m += "\nint main(void) {\n    static void* b[" + std::to_string(std::max<size_t>(rec.bufs.size(), 1)) + "];\n";
    for (size_t id = 0; id < rec.bufs.size(); ++id) {
        const Buffer& b = rec.bufs[id];
        if (b.written >= 0) continue;
        const std::string d = "d" + std::to_string(id);
        const std::string n = std::to_string(kernel::quantised(b.dtype) ? (int64_t)b.bits.size() : b.n);  // blocks: bytes
        m += "    b[" + std::to_string(id) + "] = copy_buffer(" + d + ", " + n + ", sizeof " + d + "[0]);\n";
    }
    for (size_t l = 0; l < rec.launches.size(); ++l) {
        const Launched& la = rec.launches[l];
        const kernel::Kernel& k = rec.kernels[la.kernel];
        const Buffer& wrote = rec.bufs[la.out];
        const std::optional<kernel::Split> sp = kernel::split_loop(k);
        m += "    b[" + std::to_string(la.out) + "] = alloc(" + std::to_string(wrote.n) + ", " +
             std::to_string(kernel::element_size(wrote.dtype)) + ");\n";
        std::string a;
        for (size_t i : la.in) a += "b[" + std::to_string(i) + "], ";
        m += "    {\n        void* const a[] = {" + a + "b[" + std::to_string(la.out) + "]};\n        launch(presk_kernel" +
             std::to_string(la.kernel) + ", a, " + std::to_string(sp ? sp->lo : 0) + ", " + std::to_string(sp ? sp->hi : 0) +
             ", \"" + c_string(k.name) + "\");\n    }\n";
        for (size_t id = 0; id < rec.bufs.size(); ++id)
            if (rec.bufs[id].last == (int)l || (rec.bufs[id].written == (int)l && rec.bufs[id].last < (int)l))
                m += "    free(b[" + std::to_string(id) + "]);\n";
    }
    m += print;
    m += "    return 0;\n}\n";

    std::string objects = "main.o pmath.o";
    for (size_t i = 0; i < rec.kernels.size(); ++i) {
        x.files.emplace_back("kernel" + std::to_string(i) + ".c",
                             kernel::print_c(rec.kernels[i], "presk_kernel" + std::to_string(i)));
        objects += " kernel" + std::to_string(i) + ".o";
    }
    x.files.emplace_back("pmath.c", std::string(kernel::pmath_c_text()));
    x.files.emplace_back("pmath.h", std::string(kernel::pmath_h_text()));
    x.files.emplace_back("main.c", m);
    x.files.emplace_back("Makefile",
                         "# " + c_comment(x.name) + ": the entry " + c_comment(p.entry) +
                             ", exported by presk export --target c. `make` builds ./" + x.name +
                             ".\n# No fast-math and no contraction: every operation rounds as presk's kernel "
                             "interpreter rounds it.\nPROGRAM = " + x.name + "\nCC = cc\nCFLAGS = -O2\n"
                             "PRESK_CFLAGS = -std=c11 -ffp-contract=off\nOBJECTS = " + objects +
                             "\n\n$(PROGRAM): $(OBJECTS)\n\t$(CC) $(CFLAGS) $(PRESK_CFLAGS) -o $@ $(OBJECTS) -lm\n\n"
                             "%.o: %.c pmath.h\n\t$(CC) $(CFLAGS) $(PRESK_CFLAGS) -c -o $@ $<\n\n"
                             "clean:\n\trm -f $(PROGRAM) $(OBJECTS)\n\n.PHONY: clean\n");
    return x;
}

} // namespace presk::realize
