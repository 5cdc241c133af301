// buffer.cpp - buffers in a Vulkan device's memory (vk.h: host-visible, mapped once; the
// mapped address is the base every tensor's data pointer is taken from).
#include "vk.h"

#include "../debug.h"

#include <cstring>
#include <new>

namespace gk::vulkan {
namespace {

constexpr size_t k_alignment = 256;  // above every device's minStorageBufferOffsetAlignment

struct buffer_context {
    device_context * d;
    VkBuffer         buffer;
    VkDeviceMemory   memory;
    void *           mapped;
};

buffer_context * ctx_of(gk_backend_buffer_t b) { return static_cast<buffer_context *>(b->context); }

void release(buffer_context * c) {
    if (c->mapped) vkUnmapMemory(c->d->dev, c->memory);
    if (c->buffer) vkDestroyBuffer(c->d->dev, c->buffer, nullptr);
    if (c->memory) vkFreeMemory(c->d->dev, c->memory, nullptr);
    delete c;
}

void free_buffer(gk_backend_buffer_t b) { release(ctx_of(b)); }

void * base(gk_backend_buffer_t b) { return ctx_of(b)->mapped; }

void clear(gk_backend_buffer_t b, uint8_t value) { std::memset(ctx_of(b)->mapped, value, b->size); }

const char * buft_name(gk_backend_buffer_type_t buft) {
    return static_cast<device_context *>(buft->context)->name.c_str();
}

gk_backend_buffer_t alloc_buffer(gk_backend_buffer_type_t buft, size_t size) {
    device_context & d     = *static_cast<device_context *>(buft->context);
    const size_t     bytes = size == 0 ? k_alignment : size;
    if (bytes > d.heap_size) {  // not asked of the driver: a software device would take it from the host
        backend_error("%s buffer: cannot allocate %zu bytes: more than the device's memory (%llu MiB)", d.name.c_str(),
                      size, static_cast<unsigned long long>(d.heap_size >> 20));
        return nullptr;
    }
    auto * c = new (std::nothrow) buffer_context{&d, VK_NULL_HANDLE, VK_NULL_HANDLE, nullptr};
    if (!c) {
        backend_error("%s buffer: out of memory", d.name.c_str());
        return nullptr;
    }
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size        = bytes;
    bi.usage       = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r     = vkCreateBuffer(d.dev, &bi, nullptr, &c->buffer);
    VkMemoryRequirements req{};
    if (r == VK_SUCCESS) {
        vkGetBufferMemoryRequirements(d.dev, c->buffer, &req);
        if (!(req.memoryTypeBits & (1u << d.memory_type))) r = VK_ERROR_FEATURE_NOT_PRESENT;
    }
    if (r == VK_SUCCESS) {
        VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        ai.allocationSize  = req.size;
        ai.memoryTypeIndex = d.memory_type;
        r                  = vkAllocateMemory(d.dev, &ai, nullptr, &c->memory);
    }
    if (r == VK_SUCCESS) r = vkBindBufferMemory(d.dev, c->buffer, c->memory, 0);
    if (r == VK_SUCCESS) r = vkMapMemory(d.dev, c->memory, 0, VK_WHOLE_SIZE, 0, &c->mapped);
    if (r != VK_SUCCESS) {
        backend_error("%s buffer: cannot allocate %zu bytes (%s)", d.name.c_str(), size, result_name(r));
        release(c);
        return nullptr;
    }
    debug_fill_fresh(c->mapped, bytes);
    // mapped memory: the host's memset and copies serve
    const gk_backend_buffer_i i{free_buffer, base, nullptr, host::memset_tensor, host::set_tensor, host::get_tensor,
                                clear, nullptr, nullptr};
    gk_backend_buffer_t b = buffer_init(buft, i, c, size);
    if (!b) release(c);
    return b;
}

size_t alignment(gk_backend_buffer_type_t) { return k_alignment; }

size_t max_size(gk_backend_buffer_type_t buft) {
    return static_cast<size_t>(static_cast<device_context *>(buft->context)->max_buffer);
}

} // namespace

void init_buffer_type(device_context & d) {
    d.buffer_type = {{buft_name, alloc_buffer, alignment, max_size, nullptr, nullptr}, &d.device, &d};
}

VkBuffer buffer_handle(gk_backend_buffer_t buffer) {
    buffer = buffer_memory(buffer);
    return buffer && buffer->iface.get_base == base ? ctx_of(buffer)->buffer : VK_NULL_HANDLE;
}

} // namespace gk::vulkan
