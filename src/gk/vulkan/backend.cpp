// backend.cpp - a Vulkan backend: computes a graph whose tensors live in its device's
// buffers by recording one dispatch per node (layout ops need none) into a command
// buffer, a barrier after each so that a node sees its sources written, then submitting
// it and waiting.
#include "vk.h"

#include "../internal.h"

#include <algorithm>
#include <new>
#include <vector>

namespace gk::vulkan {
namespace {

struct backend_context {
    device_context * d;
};

device_context & dev_of(gk_backend_t b) { return *static_cast<backend_context *>(b->context)->d; }

const char * backend_name(gk_backend_t b) { return dev_of(b).name.c_str(); }

void backend_free(gk_backend_t b) { delete static_cast<backend_context *>(b->context); }

/// The nodes that need a dispatch.
std::vector<gk_tensor *> computed_nodes(gk_cgraph * graph) {
    std::vector<gk_tensor *> out;
    for (int i = 0; i < gk_graph_n_nodes(graph); ++i) {
        gk_tensor * n = gk_graph_node(graph, i);
        if (n->op != GK_OP_NONE && !is_layout_op(n->op)) out.push_back(n);
    }
    return out;
}

/// The descriptor writes of `node`: bindings 0, 1, 2 = src[0], src[1], the node, 3 =
/// `aux` (the node's host-filled data), 4, 5, 6 = src[2], src[3], src[4]; a missing one
/// is bound to the node's buffer, which the shader does not read. false with a message
/// when a tensor is not in this device's memory.
bool bind(device_context & d, VkDescriptorSet set, const gk_tensor * node, VkBuffer aux) {
    const gk_tensor *      t[k_bindings] = {node->src[0], node->src[1], node,        node,
                                            node->src[2], node->src[3], node->src[4]};
    VkDescriptorBufferInfo info[k_bindings];
    VkWriteDescriptorSet   w[k_bindings];
    for (uint32_t i = 0; i < k_bindings; ++i) {
        const gk_tensor * x = t[i] ? t[i] : node;
        VkBuffer          h = i == 3 && aux != VK_NULL_HANDLE ? aux : buffer_handle(x->buffer);
        if (h == VK_NULL_HANDLE) {
            backend_error("%s: tensor '%s' (%s of node '%s') is not in %s memory (it is in %s)", d.name.c_str(),
                          gk_get_name(x), x == node ? "the result" : "a source", gk_get_name(node), d.name.c_str(),
                          x->buffer ? gk_backend_buft_name(gk_backend_buffer_get_type(x->buffer)) : "no buffer");
            return false;
        }
        info[i] = {h, 0, VK_WHOLE_SIZE};
        w[i]    = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w[i].dstSet          = set;
        w[i].dstBinding      = i;
        w[i].descriptorCount = 1;
        w[i].descriptorType  = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo     = &info[i];
    }
    vkUpdateDescriptorSets(d.dev, k_bindings, w, 0, nullptr);
    return true;
}

/// The nodes' host-filled data (vk.h, aux_bytes) in one buffer of the device, each
/// node's at a 256-byte aligned offset (`words`: in 32-bit words); nullptr when no node
/// has any, or (with a message) when the buffer cannot be allocated.
struct aux_data {
    gk_backend_buffer_t   buffer = nullptr;
    std::vector<uint32_t> words;
    bool                  failed = false;

    aux_data(device_context & d, const std::vector<gk_tensor *> & nodes) : words(nodes.size(), 0) {
        std::vector<size_t> at(nodes.size());
        size_t              total = 0;
        for (size_t i = 0; i < nodes.size(); ++i) {
            at[i] = total;
            total += (aux_bytes(nodes[i]) + 255) / 256 * 256;
            words[i] = static_cast<uint32_t>(at[i] / 4);
        }
        if (total == 0) return;
        buffer = gk_backend_buft_alloc_buffer(&d.buffer_type, total);
        failed = buffer == nullptr;
        if (failed) return;
        auto * base = static_cast<char *>(gk_backend_buffer_get_base(buffer));
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (aux_bytes(nodes[i]) > 0) aux_fill(nodes[i], base + at[i]);
        }
    }
    ~aux_data() { gk_backend_buffer_free(buffer); }
    aux_data(const aux_data &)             = delete;
    aux_data & operator=(const aux_data &) = delete;
};

/// The node's op as the messages name it: the unary or GLU op ("TANH"), else the op ("FLASH_ATTN_EXT").
const char * op_label(const gk_tensor * node) {
    if (node->op == GK_OP_UNARY) return gk_unary_op_name(gk_get_unary_op(node));
    if (node->op == GK_OP_GLU) return gk_glu_op_name(gk_get_glu_op(node));
    return gk_op_name(node->op);
}

gk_status graph_compute(gk_backend_t b, gk_cgraph * graph) {
    device_context &               d     = dev_of(b);
    const std::vector<gk_tensor *> nodes = computed_nodes(graph);
    if (nodes.empty()) return GK_STATUS_SUCCESS;
    const auto n = static_cast<uint32_t>(nodes.size());
    for (gk_tensor * node : nodes) {  // before aux_data reads the nodes' sources
        std::string why;
        for (int k = 0; k < 3; ++k) {
            const gk_tensor * s = (aux_reads_sources(node) >> k & 1u) != 0 ? node->src[k] : nullptr;
            while (s && s->view_src) s = s->view_src;
            if (s && std::find(nodes.begin(), nodes.end(), s) != nodes.end()) {
                why = std::string("its source '") + gk_get_name(s) +
                      "' is computed in the same graph, and the host reads it before the graph runs";
            }
        }
        if (!why.empty() || !supports_op(d, node, &why)) {
            backend_error("%s: node '%s' (%s): %s", d.name.c_str(), gk_get_name(node), op_label(node), why.c_str());
            gk::set_error(gk_graph_context(graph), "%s", gk_backend_last_error());
            return GK_STATUS_UNSUPPORTED;
        }
    }
    const aux_data aux(d, nodes);
    if (aux.failed) {
        gk::set_error(gk_graph_context(graph), "%s", gk_backend_last_error());
        return GK_STATUS_ALLOC_FAILED;
    }
    const VkBuffer aux_handle = aux.buffer ? buffer_handle(aux.buffer) : VK_NULL_HANDLE;

    std::lock_guard<std::mutex> lock(d.queue_mutex);  // one submission at a time on the queue
    VkDescriptorPoolSize        size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, k_bindings * n};
    VkDescriptorPoolCreateInfo  pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets       = n;
    pi.poolSizeCount = 1;
    pi.pPoolSizes    = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkCommandBuffer  cmd  = VK_NULL_HANDLE;
    VkFence          done = VK_NULL_HANDLE;
    gk_status        st   = GK_STATUS_SUCCESS;
    VkResult         r    = vkCreateDescriptorPool(d.dev, &pi, nullptr, &pool);
    std::vector<VkDescriptorSet> sets(n);
    if (r == VK_SUCCESS) {
        std::vector<VkDescriptorSetLayout> layouts(n, d.set_layout);
        VkDescriptorSetAllocateInfo        ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool     = pool;
        ai.descriptorSetCount = n;
        ai.pSetLayouts        = layouts.data();
        r                     = vkAllocateDescriptorSets(d.dev, &ai, sets.data());
    }
    if (r == VK_SUCCESS) {
        VkCommandBufferAllocateInfo ci{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ci.commandPool        = d.command_pool;
        ci.level              = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ci.commandBufferCount = 1;
        r                     = vkAllocateCommandBuffers(d.dev, &ci, &cmd);
    }
    if (r == VK_SUCCESS) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        r = vkCreateFence(d.dev, &fi, nullptr, &done);
    }
    if (r != VK_SUCCESS) {
        backend_error("%s: cannot prepare the command buffer (%s)", d.name.c_str(), result_name(r));
        st = GK_STATUS_ALLOC_FAILED;
    }
    if (st == GK_STATUS_SUCCESS) {
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        vkBeginCommandBuffer(cmd, &bi);
        for (uint32_t i = 0; i < n && st == GK_STATUS_SUCCESS; ++i) {
            const VkBuffer node_aux = aux_bytes(nodes[i]) > 0 ? aux_handle : VK_NULL_HANDLE;
            if (!bind(d, sets[i], nodes[i], node_aux) || !record_op(d, cmd, sets[i], nodes[i], aux.words[i])) {
                st = GK_STATUS_FAILED;
            }
            record_barrier(cmd);
        }
        VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};  // what the host reads after the fence
        to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                             nullptr, 0, nullptr);
        vkEndCommandBuffer(cmd);
    }
    if (st == GK_STATUS_SUCCESS) {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers    = &cmd;
        r                     = vkQueueSubmit(d.queue, 1, &si, done);
        if (r == VK_SUCCESS) r = vkWaitForFences(d.dev, 1, &done, VK_TRUE, UINT64_MAX);
        if (r != VK_SUCCESS) {
            backend_error("%s: the computation failed (%s)", d.name.c_str(), result_name(r));
            st = GK_STATUS_FAILED;
        }
    }
    for (uint32_t i = 0; i < n && st == GK_STATUS_SUCCESS && aux.buffer; ++i) {  // errors the shaders report
        std::string why;
        if (aux_bytes(nodes[i]) > 0 &&
            !aux_check(nodes[i],
                       static_cast<const char *>(gk_backend_buffer_get_base(aux.buffer)) + aux.words[i] * size_t{4},
                       &why)) {
            backend_error("%s: node '%s' (%s): %s", d.name.c_str(), gk_get_name(nodes[i]), op_label(nodes[i]),
                          why.c_str());
            st = GK_STATUS_OUT_OF_RANGE;
        }
    }
    if (done) vkDestroyFence(d.dev, done, nullptr);
    if (cmd) vkFreeCommandBuffers(d.dev, d.command_pool, 1, &cmd);
    if (pool) vkDestroyDescriptorPool(d.dev, pool, nullptr);
    if (st != GK_STATUS_SUCCESS) {
        gk::set_error(gk_graph_context(graph), "%s", gk_backend_last_error());  // where gk_sched and callers look
    }
    return st;
}

} // namespace

void record_barrier(VkCommandBuffer cmd) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                         &barrier, 0, nullptr, 0, nullptr);
}

gk_backend_t init_backend(device_context & d) {
    auto * ctx = new (std::nothrow) backend_context{&d};
    if (!ctx) {
        backend_error("%s: out of memory", d.name.c_str());
        return nullptr;
    }
    gk_backend_t b = backend_init({backend_name, backend_free, graph_compute, nullptr}, &d.device, ctx);
    if (!b) delete ctx;
    return b;
}

} // namespace gk::vulkan
