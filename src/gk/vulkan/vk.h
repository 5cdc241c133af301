// vk.h - the Vulkan backend's shared parts (GK_VULKAN builds): a device's context
// (instance-level handles, its queue, limits and pipelines), the buffers over its memory,
// and the op table. Internal to src/gk/vulkan/; the rest of gk sees the devices through
// the registry (vulkan_devices()).
//
// Memory: one VkBuffer per gk buffer, in memory the host can map (device-local too where
// the device offers both, else host memory the device reads over its bus); the mapped
// address is the buffer's base, so set/get are copies and every tensor's data pointer
// is base + its offset. The buffer type is not "host" to the rest of gk: the scheduler
// stages values into it, as it would for memory the CPU cannot address.
//
// Compute: a graph is recorded into one command buffer, a dispatch per node with a
// barrier after each, submitted and waited for. Shaders bind tensors whole (the VkBuffer
// behind them) and address elements from an offset and strides in push constants
// (shaders/index.glsl), so no descriptor offset alignment applies to views. Binding 3
// holds data the host makes for a node as it records (the CPU's GELU tables, rope's
// angles, ALiBi slopes: aux_bytes / aux_fill), in one buffer per compute.
#pragma once

#include "../backend/impl.h"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace gk::vulkan {

/// The shaders (shaders/*.comp, compiled to SPIR-V at build time and embedded).
enum class shader {
    binary,
    scale,
    mul_mat,
    norm,
    copy,
    glu,
    unary,
    get_rows,
    set_rows,
    soft_max,
    rope,
    flash_attn,
    quantize_act,
    mul_mat_q,
    pad,
    count
};

/// Storage buffers a shader sees: src[0], src[1], dst, the host-filled data, src[2..4].
constexpr uint32_t k_bindings = 7;

/// One pipeline: a shader with its specialization constant 0.
struct pipeline_key {
    shader   s;
    uint32_t spec;
};

/// A device and everything made on it once (kept for the process's life).
struct device_context {
    VkInstance                 instance = VK_NULL_HANDLE;
    VkPhysicalDevice           phys     = VK_NULL_HANDLE;
    VkDevice                   dev      = VK_NULL_HANDLE;
    VkQueue                    queue    = VK_NULL_HANDLE;
    uint32_t                   queue_family = 0;
    uint32_t                   memory_type  = 0;      // host-visible, coherent
    bool                       device_local = false;  // ... and device-local
    bool                       float64      = false;  // shaderFloat64
    VkDeviceSize               max_buffer   = 0;      // largest buffer (maxStorageBufferRange)
    VkDeviceSize               heap_size    = 0;
    uint32_t                   max_groups   = 65535;  // maxComputeWorkGroupCount[0]
    // The most loop iterations one shader invocation may run, all its loops together. No
    // limit on a GPU. Mesa's llvmpipe (lavapipe) leaves a shader's loops after 65535
    // iterations in all (gallivm's loop limiter), silently, so an op whose invocation
    // would need more is refused there.
    uint64_t                   max_loop_iterations = UINT64_MAX;
    std::string                name;                  // "Vulkan0"
    std::string                description;           // the device's name and driver
    std::string                api_version;
    VkDescriptorSetLayout                        set_layout      = VK_NULL_HANDLE;  // k_bindings storage buffers
    VkPipelineLayout           pipeline_layout = VK_NULL_HANDLE;  // + 128 bytes of push constants
    VkCommandPool              command_pool    = VK_NULL_HANDLE;
    std::mutex                 queue_mutex;           // the queue and the command pool
    std::mutex                 pipeline_mutex;        // the pipelines
    std::vector<std::pair<uint64_t, VkPipeline>> pipelines;  // by (shader, spec)
    gk_backend_feature         features[4]{};         // for the device line
    gk_backend_device          device{};
    gk_backend_buffer_type     buffer_type{};
};

/// The Vulkan devices of this machine, found once (none when there is no loader, no
/// instance or no device: never an error). Each has passed a trial (a device and a
/// queue made, the shaders turned into pipelines).
const std::vector<device_context *> & devices();

/// The pipeline of `key` on `d`, made on first use; VK_NULL_HANDLE with a message.
VkPipeline get_pipeline(device_context & d, pipeline_key key);

/// The VkBuffer behind a buffer of this backend (through the graph allocator's proxy:
/// gk::buffer_memory), or VK_NULL_HANDLE for any other buffer.
VkBuffer buffer_handle(gk_backend_buffer_t buffer);

/// The buffer type of device `d` (what its buffers are allocated from).
void init_buffer_type(device_context & d);

/// A backend on `d` (its device table's init_backend).
gk_backend_t init_backend(device_context & d);

/// Whether `d` computes `node` (the op table in ops.cpp); why not in `why` otherwise.
bool supports_op(const device_context & d, const gk_tensor * node, std::string * why);

/// Bytes of the host-filled data `node`'s shader reads at binding 3 (the CPU's GELU
/// tables, rope's angles, ALiBi slopes); 0 when it reads none.
size_t aux_bytes(const gk_tensor * node);

/// The sources of `node` aux_fill reads, bit k for src[k] (rope's src[1] and src[2],
/// timestep_embedding's src[0]): none may be computed in the graph that holds the node,
/// as the host reads them before the graph runs.
unsigned aux_reads_sources(const gk_tensor * node);

/// Write that data to `out` (aux_bytes(node) bytes), at record time: the node's sources
/// that it reads (rope's positions and frequency factors) are inputs of the graph, in
/// host-visible memory, already holding their values (supports_op checks they are leaves).
void aux_fill(const gk_tensor * node, void * out);

/// After the compute: whether the node's data at binding 3 (`aux`, aux_bytes(node)
/// bytes) reports no error (mul_mat_id's out-of-range expert id); why not in `why`.
bool aux_check(const gk_tensor * node, const void * aux, std::string * why);

/// Record `node`'s dispatch into `cmd` with descriptor set `set` (bound to its tensors'
/// buffers by the caller, bindings 0-2 = src[0], src[1], dst, 3 = its aux data, which
/// starts at 32-bit word `aux_word` there, 4-6 = src[2], src[3], src[4]). false with a message when the node cannot
/// run (supports_op says why).
bool record_op(device_context & d, VkCommandBuffer cmd, VkDescriptorSet set, const gk_tensor * node,
               uint32_t aux_word);

/// A barrier in `cmd` after which a dispatch sees what the dispatches before it wrote.
void record_barrier(VkCommandBuffer cmd);

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char * result_name(VkResult r);

} // namespace gk::vulkan
