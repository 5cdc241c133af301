// The cc backend's compiler and its cache. The compiler is run with posix_spawnp and an argument
// vector (no shell): its identity once per process and compiler, pmath once per cache folder,
// then one shared object per kernel. A cache entry is a folder named by the hash of its texts;
// it is built in a fresh folder under the cache folder and published by renaming that folder,
// so a reader sees a whole entry or none, and two processes building the same entry both end
// with a working library (the second rename fails and the loser uses what it built).
#include "kernel/cc.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "kernel/c_print.h"
#include "lang/source.h"

extern char** environ;

namespace presk::kernel {
namespace {

namespace fs = std::filesystem;

using Files = std::vector<std::pair<std::string, std::string>>;  // file name, text

const std::string kHead = "--backend cc: ";

std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] void not_found(const std::string& cc) {
    throw Error({}, kHead + "the C compiler `" + cc + "` was not found (set PRESK_CC)");
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string s;
    for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
    return s;
}

/// A finished process: its exit status (-1 when a signal ended it) and its output, stdout and
/// stderr together.
struct Ran {
    int exit = -1;
    std::string output;
};

/// Runs `argv` (argv[0] searched in PATH when it has no slash) with stdin from /dev/null.
/// Throws the missing-compiler error when argv[0] does not exist, another presk::Error when it
/// cannot be started.
Ran run(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw Error({}, kHead + "cannot make a pipe: " + errno_text(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        if (rc == ENOENT || rc == ENOTDIR) not_found(argv[0]);
        throw Error({}, kHead + "cannot run the C compiler `" + argv[0] + "`: " + errno_text(rc));
    }
    Ran r;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0) r.output.append(buf, (size_t)n);
        else if (n == 0 || errno != EINTR) break;
    }
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r.exit = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

/// Runs `argv`, throwing its command line and output when it fails. `what` names the work.
Ran run_ok(const std::vector<std::string>& argv, const std::string& what) {
    Ran r = run(argv);
    if (r.exit != 0)
        throw Error({}, kHead + what + ": `" + command_line(argv) + "` " +
                            (r.exit < 0 ? "was killed" : "failed (exit " + std::to_string(r.exit) + ")") + ":\n" +
                            trimmed(r.output));
    return r;
}

/// FNV-1a, 128 bits, as 32 hexadecimal digits: the cache's keys.
std::string fnv128(std::string_view s) {
    using u128 = unsigned __int128;
    u128 h = ((u128)0x6c62272e07bb0142ULL << 64) | 0x62b821756295c58dULL;
    const u128 prime = ((u128)0x0000000001000000ULL << 64) | 0x000000000000013bULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= prime;
    }
    static const char d[] = "0123456789abcdef";
    std::string out(32, '0');
    for (int i = 32; i-- > 0; h >>= 4) out[(size_t)i] = d[(unsigned)(h & 15)];
    return out;
}

std::string hash_files(const Files& files) {
    std::string all;
    for (const auto& [name, text] : files) all += name + '\0' + std::to_string(text.size()) + '\0' + text;
    return fnv128(all);
}

/// What the compiled code depends on besides its text, as the first line of every text
/// compiled: the compiler's version line, its target, the ISA -march=native gives (the hash of
/// the macros it predefines, sorted) and the flags.
const std::string& identity(const std::string& cc) {
    static std::mutex m;
    static std::map<std::string, std::string> known;
    std::lock_guard<std::mutex> lock(m);
    auto it = known.find(cc);
    if (it != known.end()) return it->second;
    const std::string version = run_ok({cc, "--version"}, "the compiler's version").output;
    const std::string machine = trimmed(run_ok({cc, "-dumpmachine"}, "the compiler's target").output);
    std::vector<std::string> macros;
    std::istringstream in(
        run_ok({cc, "-march=native", "-dM", "-E", "-x", "c", "/dev/null"}, "the native target").output);
    for (std::string l; std::getline(in, l);) macros.push_back(l);
    std::sort(macros.begin(), macros.end());
    std::string all;
    for (const std::string& l : macros) all += l + "\n";
    std::string id = "// presk cc: " + trimmed(version.substr(0, version.find('\n'))) + "; target " + machine +
                     "; -march=native " + fnv128(all) + "; " + command_line(cc_flags());
    return known.emplace(cc, id).first->second;
}

bool read_file(const fs::path& p, std::string& out) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return !in.bad();
}

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw Error({}, kHead + "cannot write " + p.string());
}

void append_note(std::string* note, const std::string& line) {
    if (note) *note += line + "\n";
}

/// The process's private folder (under $TMPDIR, else /tmp), made on first use and removed at exit.
const fs::path& private_root() {
    struct Folder {
        fs::path path;
        ~Folder() {
            std::error_code ec;
            if (!path.empty()) fs::remove_all(path, ec);
        }
    };
    static std::mutex m;
    static Folder folder;
    std::lock_guard<std::mutex> lock(m);
    if (folder.path.empty()) {
        const char* t = std::getenv("TMPDIR");
        std::string tmpl = std::string(t && *t ? t : "/tmp") + "/presk-cc-XXXXXX";
        if (!mkdtemp(tmpl.data()))
            throw Error({}, kHead + "cannot make a private folder " + tmpl + ": " + errno_text(errno));
        folder.path = tmpl;
    }
    return folder.path;
}

enum class State { Missing, Match, Differs };

/// Whether entry folder `dir` holds `files` exactly and a `product`; `why` says what differs.
State check(const fs::path& dir, const Files& files, const std::string& product, std::string& why) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return State::Missing;
    for (const auto& [name, text] : files) {
        std::string got;
        if (!read_file(dir / name, got) || got != text) {
            why = "its " + name + " differs from the text compiled";
            return State::Differs;
        }
    }
    if (!fs::is_regular_file(dir / product, ec)) {
        why = "its " + product + " is missing";
        return State::Differs;
    }
    return State::Match;
}

/// A fresh folder to build in under `root`; when `root` cannot be written, under the private
/// folder instead (noted once per process and folder) and `root` becomes that folder.
fs::path build_folder(fs::path& root, std::string* note) {
    std::error_code ec;
    fs::create_directories(root, ec);
    std::string tmpl = (root / ".tmp-XXXXXX").string();
    if (mkdtemp(tmpl.data())) return tmpl;
    const int e = errno;
    if (root == private_root())
        throw Error({}, kHead + "cannot make a folder in " + root.string() + ": " + errno_text(e));
    static std::mutex m;
    static std::set<std::string> noted;
    {
        std::lock_guard<std::mutex> lock(m);
        if (noted.insert(root.string()).second)
            append_note(note, kHead + "the cache folder " + root.string() + " cannot be written (" + errno_text(e) +
                                  "); what it lacks is compiled in the private folder " + private_root().string() +
                                  ", removed at exit");
    }
    root = private_root();
    return build_folder(root, note);
}

/// Writes `files` into the fresh folder `dir` and runs `argv` there; on failure removes `dir` and
/// throws the compiler's command and output.
void build(const fs::path& dir, const Files& files, const std::vector<std::string>& argv, const std::string& what) {
    std::error_code ec;
    try {
        for (const auto& [name, text] : files) write_file(dir / name, text);
        run_ok(argv, what);
    } catch (...) {
        fs::remove_all(dir, ec);
        throw;
    }
}

/// Publishes the built folder `tmp` as `dir` by a rename, moving `dir` aside and removing it
/// first when `replace` (a corrupt entry). False when `dir` exists still (another process
/// published it first).
bool publish(const fs::path& tmp, const fs::path& dir, bool replace) {
    std::error_code ec;
    if (replace) {
        const fs::path old = dir.parent_path() / (".old" + tmp.filename().string());
        fs::rename(dir, old, ec);
        fs::remove_all(old, ec);
    }
    ec.clear();
    fs::rename(tmp, dir, ec);
    return !ec;
}

/// The folder holding pmath.h and pmath.o compiled by `cc` (`id` its identity) under `root`
/// (updated when root cannot be written), and its key.
std::pair<fs::path, std::string> pmath_object(fs::path& root, const std::string& cc, const std::string& id,
                                              std::string* note) {
    const Files files = {{"pmath.h", std::string(pmath_h_text())},
                         {"pmath.c", id + "\n" + std::string(pmath_c_text())}};
    const std::string key = "pmath-" + hash_files(files);
    static std::mutex m;
    static std::map<std::string, fs::path> known;  // root/key -> the folder this process built or checked
    std::string why;
    {
        std::lock_guard<std::mutex> lock(m);
        auto it = known.find((root / key).string());
        if (it != known.end()) return {it->second, key};
    }
    State st = check(root / key, files, "pmath.o", why);
    if (st == State::Differs)
        append_note(note, kHead + "the cache entry " + (root / key).string() + " is corrupt (" + why + "); recompiled");
    fs::path dir = root / key;
    if (st != State::Match) {
        const fs::path before = root;
        const fs::path tmp = build_folder(root, note);
        if (root != before) st = check(root / key, files, "pmath.o", why);
        dir = root / key;
        if (st == State::Match) {
            std::error_code ec;
            fs::remove_all(tmp, ec);
        } else {
            std::vector<std::string> argv = {cc};
            for (const std::string& f : cc_flags()) argv.push_back(f);
            for (const char* a : {"-fvisibility=hidden", "-c", "-o"}) argv.emplace_back(a);
            argv.push_back((tmp / "pmath.o").string());
            argv.push_back((tmp / "pmath.c").string());
            build(tmp, files, argv, "pmath");
            if (!publish(tmp, dir, st == State::Differs)) {
                std::error_code ec;
                if (check(dir, files, "pmath.o", why) == State::Match) fs::remove_all(tmp, ec);
                else dir = tmp;  // left in the cache folder: the entry there is not this one
            }
        }
    }
    std::lock_guard<std::mutex> lock(m);
    known[(root / key).string()] = dir;
    return {dir, key};
}

/// `so` loaded and its functions `fns` found, or nothing (`why` says what failed). Each code
/// keeps the library loaded; its text is `text`.
std::optional<std::vector<NativeCode>> load(const fs::path& so, const std::vector<std::string>& fns,
                                            const std::string& text, std::string& why) {
    void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        why = "its kernel.so does not load: " + std::string(e ? e : "dlopen failed");
        return std::nullopt;
    }
    const std::shared_ptr<void> keep(h, [](void* p) { dlclose(p); });
    std::vector<NativeCode> out;
    for (const std::string& fn : fns) {
        void* f = dlsym(h, fn.c_str());
        if (!f) {
            why = "its kernel.so has no " + fn;
            return std::nullopt;
        }
        out.push_back({reinterpret_cast<presk_kernel_fn>(f), keep, text});
    }
    return out;
}

} // namespace

CcOptions CcOptions::from_env() {
    CcOptions o;
    auto env = [](const char* n) -> std::string {
        const char* v = std::getenv(n);
        return v ? v : "";
    };
    if (!env("PRESK_CC").empty()) o.compiler = env("PRESK_CC");
    if (!env("PRESK_CACHE").empty()) o.cache = env("PRESK_CACHE");
    else if (env("XDG_CACHE_HOME").rfind('/', 0) == 0) o.cache = env("XDG_CACHE_HOME") + "/presk";
    else if (!env("HOME").empty()) o.cache = env("HOME") + "/.cache/presk";
    return o;
}

const std::vector<std::string>& cc_flags() {
    static const std::vector<std::string> f = {"-std=c11",        "-O3",  "-march=native", "-ffp-contract=off",
                                               "-fno-math-errno", "-fPIC"};
    return f;
}

NativeCode compile_cc(const Kernel& k, const CcOptions& o, std::string* note) { return compile_cc({&k}, o, note)[0]; }

std::vector<NativeCode> compile_cc(const std::vector<const Kernel*>& ks, const CcOptions& o, std::string* note) {
    if (ks.empty()) return {};
    std::vector<std::string> fns;
    for (size_t i = 0; i < ks.size(); ++i) fns.push_back("presk_kernel" + std::to_string(i));
    const std::string c = print_c(ks, fns);
    const std::string what = ks.size() == 1 ? "kernel " + ks[0]->name : std::to_string(ks.size()) + " kernels";
    if (o.compiler.empty()) not_found(o.compiler);
    const std::string& id = identity(o.compiler);
    fs::path root = o.cache.empty() ? private_root() : fs::path(o.cache);
    const auto [pmath, pmath_key] = pmath_object(root, o.compiler, id, note);
    const Files files = {{"kernel.c", id + "; " + pmath_key + "\n" + c}};
    const std::string key = "kernel-" + hash_files(files);
    std::string why;
    State st = check(root / key, files, "kernel.so", why);
    if (st == State::Match) {
        if (auto code = load(root / key / "kernel.so", fns, c, why)) return *code;
        st = State::Differs;
    }
    if (st == State::Differs)
        append_note(note, kHead + "the cache entry " + (root / key).string() + " is corrupt (" + why + "); recompiled");
    const fs::path before = root;
    const fs::path tmp = build_folder(root, note);
    if (root != before) {  // the private folder: a library this process compiled there before
        st = check(root / key, files, "kernel.so", why);
        if (st == State::Match) {
            std::error_code ec;
            fs::remove_all(tmp, ec);
            if (auto code = load(root / key / "kernel.so", fns, c, why)) return *code;
            throw Error({}, kHead + what + ": " + why);
        }
    }
    std::vector<std::string> argv = {o.compiler};
    for (const std::string& f : cc_flags()) argv.push_back(f);
    for (const char* a : {"-shared", "-I"}) argv.emplace_back(a);
    argv.push_back(pmath.string());
    argv.emplace_back("-o");
    argv.push_back((tmp / "kernel.so").string());
    argv.push_back((tmp / "kernel.c").string());
    argv.push_back((pmath / "pmath.o").string());
    argv.emplace_back("-lm");
    build(tmp, files, argv, what);
    // Loaded before it is published: the mapping outlives the rename, whoever wins it.
    auto code = load(tmp / "kernel.so", fns, c, why);
    if (!code) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw Error({}, kHead + what + ": the library just compiled does not load (" + why + ")");
    }
    if (!publish(tmp, root / key, st == State::Differs)) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
    }
    return *code;
}

} // namespace presk::kernel
