// device.cpp - Vulkan discovery and devices: one instance, every physical device with a
// compute queue and host-visible memory (software devices such as Mesa's lavapipe only
// when GK_VULKAN_SOFTWARE=1, as the tests set it), each tried (a logical device, its layouts and
// every pipeline made) before it is listed; any failure leaves the device out with a
// line on stderr (unless GK_QUIET) and never fails the program. Also the pipelines,
// made once per (shader, specialization) and kept.
#include "spirv.h"
#include "vk.h"

#include "../debug.h"

#include <cstdio>
#include <cstring>

namespace gk::vulkan {
namespace {

constexpr uint32_t k_push_bytes     = 128;  // the least every device offers

void note(const char * fmt, const char * a, const char * b) {
    if (!env_flag("GK_QUIET")) {
        std::fprintf(stderr, fmt, a, b);
    }
}

// ---- the device table --------------------------------------------------------------------

device_context & ctx_of(gk_backend_dev_t dev) { return *static_cast<device_context *>(dev->context); }

const char * dev_name(gk_backend_dev_t dev) { return ctx_of(dev).name.c_str(); }
const char * dev_description(gk_backend_dev_t dev) { return ctx_of(dev).description.c_str(); }

void dev_memory(gk_backend_dev_t dev, size_t * free, size_t * total) {
    *total = static_cast<size_t>(ctx_of(dev).heap_size);
    *free  = *total;  // Vulkan 1.1 reports no free memory without an extension
}

/// An integrated GPU is IGPU; any other device (discrete, virtual, or a software one
/// admitted by GK_VULKAN_SOFTWARE) computes in memory of its own as far as gk is concerned.
enum gk_backend_dev_type dev_type(gk_backend_dev_t dev) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(ctx_of(dev).phys, &p);
    return p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? GK_BACKEND_DEVICE_TYPE_IGPU
                                                                   : GK_BACKEND_DEVICE_TYPE_GPU;
}

gk_backend_t dev_init(gk_backend_dev_t dev, const char *) { return init_backend(ctx_of(dev)); }

gk_backend_buffer_type_t dev_buffer_type(gk_backend_dev_t dev) { return &ctx_of(dev).buffer_type; }

bool dev_supports_op(gk_backend_dev_t dev, const gk_tensor * op) { return supports_op(ctx_of(dev), op, nullptr); }

bool dev_supports_buft(gk_backend_dev_t dev, gk_backend_buffer_type_t buft) {
    return buft == &ctx_of(dev).buffer_type;
}

const gk_backend_feature * dev_features(gk_backend_dev_t dev) { return ctx_of(dev).features; }

// ---- discovery ----------------------------------------------------------------------------

VkInstance make_instance() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "gk";
    app.apiVersion       = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    VkInstance inst     = VK_NULL_HANDLE;
    if (VkResult r = vkCreateInstance(&ci, nullptr, &inst); r != VK_SUCCESS) {
        note("gk: Vulkan: no instance (%s)%s\n", result_name(r), "");
        return VK_NULL_HANDLE;
    }
    return inst;
}

/// A queue family with compute, or -1.
int compute_family(VkPhysicalDevice phys) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams.data());
    for (uint32_t i = 0; i < n; ++i) {
        if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return static_cast<int>(i);
    }
    return -1;
}

/// Host-visible coherent memory, device-local too where there is some; false if none.
bool pick_memory(device_context & d) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(d.phys, &mp);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int                         best = -1;
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
        const VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
        if ((f & host) != host) continue;
        const bool local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        if (best < 0 || (local && !d.device_local)) {
            best           = static_cast<int>(i);
            d.device_local = local;
        }
    }
    if (best < 0) return false;
    d.memory_type = static_cast<uint32_t>(best);
    d.heap_size   = mp.memoryHeaps[mp.memoryTypes[best].heapIndex].size;
    return true;
}

/// The logical device, layouts and pipelines of `d`; false (and a line) on failure.
bool open_device(device_context & d) {
    const int fam = compute_family(d.phys);
    if (fam < 0 || !pick_memory(d)) {
        note("gk: Vulkan: %s left out (%s)\n", d.description.c_str(),
             fam < 0 ? "no compute queue" : "no host-visible memory");
        return false;
    }
    d.queue_family = static_cast<uint32_t>(fam);
    VkPhysicalDeviceFeatures have;
    vkGetPhysicalDeviceFeatures(d.phys, &have);
    VkPhysicalDeviceFeatures want{};
    want.shaderFloat64 = have.shaderFloat64;
    d.float64          = have.shaderFloat64;

    const float             prio = 1.0f;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = d.queue_family;
    qi.queueCount       = 1;
    qi.pQueuePriorities = &prio;
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos    = &qi;
    di.pEnabledFeatures     = &want;
    if (VkResult r = vkCreateDevice(d.phys, &di, nullptr, &d.dev); r != VK_SUCCESS) {
        note("gk: Vulkan: %s left out (vkCreateDevice: %s)\n", d.description.c_str(), result_name(r));
        return false;
    }
    vkGetDeviceQueue(d.dev, d.queue_family, 0, &d.queue);

    VkDescriptorSetLayoutBinding b[k_bindings];
    for (uint32_t i = 0; i < k_bindings; ++i) {
        b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = k_bindings;
    li.pBindings    = b;
    VkPushConstantRange        pc{VK_SHADER_STAGE_COMPUTE_BIT, 0, k_push_bytes};
    VkPipelineLayoutCreateInfo pi{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pi.setLayoutCount         = 1;
    pi.pSetLayouts            = &d.set_layout;
    pi.pushConstantRangeCount = 1;
    pi.pPushConstantRanges    = &pc;
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags            = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = d.queue_family;
    if (vkCreateDescriptorSetLayout(d.dev, &li, nullptr, &d.set_layout) != VK_SUCCESS ||
        vkCreatePipelineLayout(d.dev, &pi, nullptr, &d.pipeline_layout) != VK_SUCCESS ||
        vkCreateCommandPool(d.dev, &ci, nullptr, &d.command_pool) != VK_SUCCESS) {
        note("gk: Vulkan: %s left out (%s)\n", d.description.c_str(), "cannot make its layouts");
        return false;
    }
    // The trial: every shader becomes a pipeline (a driver that cannot compile one is left out).
    for (int s = 0; s < static_cast<int>(shader::count); ++s) {
        if (get_pipeline(d, {static_cast<shader>(s), 0}) == VK_NULL_HANDLE) {
            note("gk: Vulkan: %s left out (%s)\n", d.description.c_str(), "a shader does not compile");
            return false;
        }
    }
    return true;
}

std::vector<device_context *> discover() {
    std::vector<device_context *> out;
    VkInstance                    inst = make_instance();
    if (inst == VK_NULL_HANDLE) return out;
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(inst, &n, nullptr);
    std::vector<VkPhysicalDevice> phys(n);
    vkEnumeratePhysicalDevices(inst, &n, phys.data());
    for (VkPhysicalDevice p : phys) {
        auto * d     = new device_context;  // kept for the process's life, as the registry's devices
        d->instance  = inst;
        d->phys      = p;
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(p, &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !env_flag("GK_VULKAN_SOFTWARE")) {
            delete d;  // a software device (lavapipe) only when asked: the CPU backend is faster
            continue;
        }
        d->name        = "Vulkan" + std::to_string(out.size());
        d->description = props.deviceName;
        d->api_version = std::to_string(VK_API_VERSION_MAJOR(props.apiVersion)) + "." +
                         std::to_string(VK_API_VERSION_MINOR(props.apiVersion)) + "." +
                         std::to_string(VK_API_VERSION_PATCH(props.apiVersion));
        d->max_buffer  = props.limits.maxStorageBufferRange;
        d->max_groups  = props.limits.maxComputeWorkGroupCount[0];
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
            d->max_loop_iterations = 65535;  // llvmpipe's loop limiter (vk.h)
        }
        if (props.limits.maxPerStageDescriptorStorageBuffers < k_bindings) {
            note("gk: Vulkan: %s left out (%s)\n", d->description.c_str(),
                 "it binds fewer storage buffers to a shader than gk's k_bindings");
            delete d;
            continue;
        }
        if (!open_device(*d)) {
            delete d;
            continue;
        }
        d->device = {{dev_name, dev_description, dev_memory, dev_type, dev_init, dev_buffer_type, dev_supports_op,
                      dev_supports_buft, dev_features, nullptr},
                     d};
        d->features[0] = {"VULKAN_API", d->api_version.c_str()};
        d->features[1] = {"FP64", d->float64 ? "1" : "0"};
        d->features[2] = {"DEVICE_LOCAL_HOST_VISIBLE", d->device_local ? "1" : "0"};
        d->features[3] = {nullptr, nullptr};
        init_buffer_type(*d);
        out.push_back(d);
    }
    return out;
}

} // namespace

const std::vector<device_context *> & devices() {
    static const std::vector<device_context *> list = discover();
    return list;
}

VkPipeline get_pipeline(device_context & d, pipeline_key key) {
    const uint64_t              id = static_cast<uint64_t>(key.s) << 32 | key.spec;
    std::lock_guard<std::mutex> lock(d.pipeline_mutex);
    for (const auto & [k, p] : d.pipelines) {
        if (k == id) return p;
    }
    const spirv_blob         code = spirv(key.s);
    std::vector<uint32_t>    words(code.size / 4);
    std::memcpy(words.data(), code.bytes, words.size() * 4);
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize          = words.size() * 4;
    mi.pCode             = words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    if (VkResult r = vkCreateShaderModule(d.dev, &mi, nullptr, &module); r != VK_SUCCESS) {
        backend_error("Vulkan: vkCreateShaderModule: %s", result_name(r));
        return VK_NULL_HANDLE;
    }
    const VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
    const VkSpecializationInfo     spec{1, &entry, sizeof(uint32_t), &key.spec};
    VkComputePipelineCreateInfo    ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage        = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT,
                       module, "main", &spec};
    ci.layout       = d.pipeline_layout;
    VkPipeline pipe = VK_NULL_HANDLE;
    const VkResult r = vkCreateComputePipelines(d.dev, VK_NULL_HANDLE, 1, &ci, nullptr, &pipe);
    vkDestroyShaderModule(d.dev, module, nullptr);
    if (r != VK_SUCCESS) {
        backend_error("Vulkan: vkCreateComputePipelines: %s", result_name(r));
        return VK_NULL_HANDLE;
    }
    d.pipelines.emplace_back(id, pipe);
    return pipe;
}

const char * result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "a VkResult error";
    }
}

} // namespace gk::vulkan
