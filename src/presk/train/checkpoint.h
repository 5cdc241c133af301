// presk train's checkpoints (docs/presk.md, "Checkpoints"): a folder holding checkpoint.json
// (the run's identity and state, nlohmann-json) and tensors.bin (every tensor's elements, one
// after another, as the host's little-endian buffers hold them), the JSON recording each
// tensor's place and the FNV-1a 64 checksum and size of tensors.bin.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace presk::train {

/// One tensor of a checkpoint: "params.<path>", "m.<path>" or "s.<path>"; its element type
/// (f64, f32, bf16; "mpfr" for the reference interpreter's numbers, each its exact base-16
/// text ending in a NUL byte), its element count and its bytes.
struct Blob {
    std::string name, dtype;
    int64_t count = 0;
    std::string bytes;
};

/// What a checkpoint says of the run that wrote it. The identity (the fields up to `data`) must
/// equal the resuming run's; `step` and `epoch`/`batch` are where it stopped.
struct CheckpointMeta {
    std::string entry;        // the gradient entry, as Core names it
    std::string params_type;  // the parameter tree's type
    std::string arithmetic;   // "interp 256 bits", or the realization: "f32", "@R.json (f32)"
    std::string backend;      // interp, kernel, native, cc (kernel, native and cc resume each other)
    uint64_t seed = 0;
    double lr = 0;
    int64_t warmup = 0, steps = 0;
    std::string data;         // the pipeline's source ("synthesised", "tokens <hash> <count>")
    int64_t step = 0;         // the steps done
    int64_t epoch = 0, batch = 0;  // the pipeline's position of the last step done
};

/// Writes a checkpoint into folder `dir` (created). Throws presk::Error when it cannot.
void save_checkpoint(const std::string& dir, const CheckpointMeta& meta, const std::vector<Blob>& blobs);

/// Reads the checkpoint in `dir`. Throws presk::Error naming `dir` and the problem: no such
/// folder or file, JSON that is malformed or not a presk checkpoint (format, version), a field
/// missing or of the wrong kind, tensors.bin truncated or longer than recorded, a checksum that
/// differs, a tensor outside the file or of an unknown type.
std::vector<Blob> load_checkpoint(const std::string& dir, CheckpointMeta* meta);

} // namespace presk::train
