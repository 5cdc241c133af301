#include "train/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lang/source.h"
#include "ref/chacha.h"

namespace presk::train {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "presk-checkpoint";
constexpr int kVersion = 1;

std::string checksum_hex(const std::string& bytes) {
    std::ostringstream s;
    s << std::hex << ref::fnv1a64(bytes);
    return s.str();
}

std::string read_file(const std::filesystem::path& p, const std::string& dir) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw Error({}, "checkpoint " + dir + ": cannot read " + p.filename().string());
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw Error({}, "checkpoint " + dir + ": cannot read " + p.filename().string());
    return ss.str();
}

void write_file(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream o(p, std::ios::binary);
    o << bytes;
    o.close();
    if (!o) throw Error({}, "cannot write " + p.string());
}

/// The element size of a stored type, 0 for mpfr's texts; -1 for a type there is not.
int elem_size(const std::string& dtype) {
    if (dtype == "f64") return 8;
    if (dtype == "f32") return 4;
    if (dtype == "bf16") return 2;
    return dtype == "mpfr" ? 0 : -1;
}

} // namespace

void save_checkpoint(const std::string& dir, const CheckpointMeta& m, const std::vector<Blob>& blobs) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error({}, "--checkpoint: cannot create " + dir + ": " + ec.message());
    std::string bin;
    json tensors = json::array();
    for (const Blob& b : blobs) {
        tensors.push_back({{"name", b.name}, {"dtype", b.dtype}, {"count", b.count}, {"offset", bin.size()}, {"bytes", b.bytes.size()}});
        bin += b.bytes;
    }
    json j = {{"format", kFormat},
              {"version", kVersion},
              {"entry", m.entry},
              {"params_type", m.params_type},
              {"arithmetic", m.arithmetic},
              {"backend", m.backend},
              {"seed", m.seed},
              {"schedule", {{"lr", m.lr}, {"warmup", m.warmup}, {"steps", m.steps}}},
              {"data", m.data},
              {"step", m.step},
              {"epoch", m.epoch},
              {"batch", m.batch},
              {"tensors_bin", {{"bytes", bin.size()}, {"fnv1a64", checksum_hex(bin)}}},
              {"tensors", tensors}};
    const std::filesystem::path d(dir);
    write_file(d / "tensors.bin", bin);
    write_file(d / "checkpoint.json", j.dump(1) + "\n");
}

std::vector<Blob> load_checkpoint(const std::string& dir, CheckpointMeta* m) {
    const std::string what = "checkpoint " + dir + ": ";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error({}, what + "no such folder");
    const std::filesystem::path d(dir);
    if (!std::filesystem::exists(d / "checkpoint.json", ec)) throw Error({}, what + "no checkpoint.json (not a presk checkpoint)");
    json j;
    try {
        j = json::parse(read_file(d / "checkpoint.json", dir));
    } catch (const json::exception& e) {
        throw Error({}, what + "checkpoint.json is not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!j.is_object() || j.value("format", json()) != kFormat)
        throw Error({}, what + "checkpoint.json is not a presk checkpoint (no \"format\": \"" + kFormat + "\")");
    if (j.value("version", json()) != kVersion)
        throw Error({}, what + "version " + j.value("version", json()).dump() + ", this presk reads version " + std::to_string(kVersion));
    std::vector<Blob> blobs;
    try {
        m->entry = j.at("entry").get<std::string>();
        m->params_type = j.at("params_type").get<std::string>();
        m->arithmetic = j.at("arithmetic").get<std::string>();
        m->backend = j.at("backend").get<std::string>();
        m->seed = j.at("seed").get<uint64_t>();
        m->lr = j.at("schedule").at("lr").get<double>();
        m->warmup = j.at("schedule").at("warmup").get<int64_t>();
        m->steps = j.at("schedule").at("steps").get<int64_t>();
        m->data = j.at("data").get<std::string>();
        m->step = j.at("step").get<int64_t>();
        m->epoch = j.at("epoch").get<int64_t>();
        m->batch = j.at("batch").get<int64_t>();
        const uint64_t size = j.at("tensors_bin").at("bytes").get<uint64_t>();
        const std::string sum = j.at("tensors_bin").at("fnv1a64").get<std::string>();
        if (!std::filesystem::exists(d / "tensors.bin", ec)) throw Error({}, what + "no tensors.bin");
        const std::string bin = read_file(d / "tensors.bin", dir);
        if (bin.size() < size)
            throw Error({}, what + "tensors.bin is truncated: " + std::to_string(bin.size()) + " bytes, " + std::to_string(size) + " recorded");
        if (bin.size() > size)
            throw Error({}, what + "tensors.bin has " + std::to_string(bin.size()) + " bytes, " + std::to_string(size) + " recorded");
        if (checksum_hex(bin) != sum)
            throw Error({}, what + "tensors.bin is corrupt: its checksum is " + checksum_hex(bin) + ", " + sum + " recorded");
        for (const json& t : j.at("tensors")) {
            Blob b;
            b.name = t.at("name").get<std::string>();
            b.dtype = t.at("dtype").get<std::string>();
            b.count = t.at("count").get<int64_t>();
            const uint64_t off = t.at("offset").get<uint64_t>(), n = t.at("bytes").get<uint64_t>();
            const int es = elem_size(b.dtype);
            if (es < 0) throw Error({}, what + "tensor " + b.name + " has the unknown type '" + b.dtype + "'");
            if (off > bin.size() || n > bin.size() - off || b.count < 0 || (es > 0 && (uint64_t)b.count * (uint64_t)es != n))
                throw Error({}, what + "tensor " + b.name + " does not fit: " + std::to_string(b.count) + " elements at bytes " +
                                    std::to_string(off) + ".." + std::to_string(off + n) + " of " + std::to_string(bin.size()));
            b.bytes = bin.substr(off, n);
            blobs.push_back(std::move(b));
        }
    } catch (const json::exception& e) {
        throw Error({}, what + "checkpoint.json lacks a field or has one of the wrong kind (" + std::string(e.what()) + ")");
    }
    return blobs;
}

} // namespace presk::train
