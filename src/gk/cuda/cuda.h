// cuda.h - the CUDA backend's shared parts (GK_CUDA builds): a device's context, its
// buffers (cudaMalloc'd; set/get are copies over the bus), and the op table whose
// kernels are in kernels.cu. Internal to src/gk/cuda/; the rest of gk sees the devices
// through the registry (cuda::devices()).
//
// Compute: a graph (a scheduler split) launches one kernel per node on the backend's
// stream, then synchronizes. Kernels take each tensor's device pointer and its strides in
// bytes, so views, transposes and permutations need no copy. Each kernel computes its op
// as the CPU kernel does, operation for operation (no contraction: gk's CUDA sources are
// compiled with -fmad=false, IEEE division and square root), so results have the CPU's
// bits.
#pragma once

#include "../backend/impl.h"

#include <string>
#include <vector>

namespace gk::cuda {

/// A device found at discovery (kept for the process's life).
struct device_context {
    int                    index = 0;      // CUDA device ordinal
    std::string            name;           // "CUDA0"
    std::string            description;    // the device's name
    std::string            compute;        // "8.9"
    std::string            sms;            // multiprocessors
    std::string            shared;         // shared memory per block, KiB
    size_t                 total_memory = 0;
    gk_backend_feature     features[5]{};
    gk_backend_device      device{};
    gk_backend_buffer_type buffer_type{};
};

/// The CUDA devices that passed the probe (an empty kernel launched and synchronized);
/// none when there is no driver or no device: never an error.
const std::vector<device_context *> & devices();

/// "sm_75 sm_80 ... compute_120": what this build's kernels were compiled for.
const char * built_for();

void         init_buffer_type(device_context & d);
gk_backend_t init_backend(device_context & d);

/// Whether `d` computes `node`; why not in `why` otherwise.
bool supports_op(const gk_tensor * node, std::string * why);

/// Launch node's kernel on `stream` (a cudaStream_t); GK_STATUS_SUCCESS, or an error with
/// a message (GK_STATUS_OUT_OF_RANGE for mul_mat_id's expert id outside the experts).
gk_status launch_op(const gk_tensor * node, void * stream);

/// An empty kernel launched and waited for on the current device: "" or the CUDA error.
std::string probe_kernel();

} // namespace gk::cuda
