// VK_LAYER_TANDEM_frame_generation's entry points: the loader's layer interface
// (vkNegotiateLoaderLayerInterfaceVersion, then vkGetInstanceProcAddr / vkGetDeviceProcAddr) and
// the functions the layer intercepts. With generation asked for (docs/layer.md), vkCreateInstance
// raises the Vulkan version, vkCreateDevice adds Tandem's extensions and features
// (device_additions.hpp), vkCreateSwapchainKHR adds usage and images, and vkQueuePresentKHR hands
// each frame to the swapchain's generation (frame_generation.hpp). Every queue call holds its
// queue's lock. It counts swapchains and frames for the report (frame_report.hpp).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "device_additions.hpp"
#include "dispatch_table.hpp"
#include "frame_generation.hpp"
#include "frame_report.hpp"
#include "layer_config.hpp"
#include "layer_log.hpp"
#include "layer_settings.hpp"
#include "layer_state.hpp"
#include "scaled_swapchain.hpp"
#include "submission.hpp"

namespace tandem::layer {
namespace {

// The loader's link in the create info's pNext chain that carries the next layer's
// GetInstanceProcAddr (and GetDeviceProcAddr). Each layer consumes its link by moving the chain's
// pLayerInfo on before calling down; the chain is const in the signature but is the loader's, made
// for this.
template <typename LinkInfo>
LinkInfo* find_link(const void* next, VkStructureType type) {
    auto* info = static_cast<LinkInfo*>(const_cast<void*>(next));
    while (info != nullptr && !(info->sType == type && info->function == VK_LAYER_LINK_INFO)) {
        info = static_cast<LinkInfo*>(const_cast<void*>(info->pNext));
    }
    return info;
}

// The loader's callback that makes an object the layer got from below dispatchable, from the
// vkCreateDevice chain; null when the loader gave none.
PFN_vkSetDeviceLoaderData find_set_loader_data(const void* next) {
    for (auto* info = static_cast<const VkLayerDeviceCreateInfo*>(next); info != nullptr;
         info = static_cast<const VkLayerDeviceCreateInfo*>(info->pNext)) {
        if (info->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
            info->function == VK_LOADER_DATA_CALLBACK) {
            return info->u.pfnSetDeviceLoaderData;
        }
    }
    return nullptr;
}

void write_report_if_asked() {
    if (!layer_settings().report_path.empty()) {
        static_cast<void>(write_frame_report(registry().report_contents()));
    }
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* create_info,
                                              const VkAllocationCallbacks* allocator,
                                              VkInstance* instance) {
    auto* link = find_link<VkLayerInstanceCreateInfo>(
        create_info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
    if (link == nullptr || link->u.pLayerInfo == nullptr) {
        log_problem("vkCreateInstance without the loader's layer link: is the layer loaded by the "
                    "Vulkan loader?");
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const PFN_vkGetInstanceProcAddr next = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    const auto create =
        reinterpret_cast<PFN_vkCreateInstance>(next(VK_NULL_HANDLE, "vkCreateInstance"));
    if (create == nullptr) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    VkLayerInstanceLink* const below = link->u.pLayerInfo;
    // Frame generation embeds Tandem, which needs a Vulkan 1.3 instance: the program's version
    // is raised (what it asked for still works); where the loader refuses, it is created as
    // asked and its devices pass frames through.
    bool raised = false;
    VkResult result = VK_ERROR_INITIALIZATION_FAILED;
    if (layer_settings().uses_runtime()) {
        VkInstanceCreateInfo raised_info = *create_info;
        VkApplicationInfo application{};
        raised_info.pApplicationInfo =
            raised_application_info(create_info->pApplicationInfo, application);
        result = create(&raised_info, allocator, instance);
        raised = result == VK_SUCCESS;
        link->u.pLayerInfo = below;
    }
    if (!raised) {
        result = create(create_info, allocator, instance);
    }
    if (result != VK_SUCCESS) {
        return result;
    }
    auto record = std::make_shared<InstanceRecord>();
    record->raised_for_tandem = raised;
    for (std::uint32_t i = 0; i < create_info->enabledExtensionCount; ++i) {
        record->surface_enabled =
            record->surface_enabled || std::string_view(create_info->ppEnabledExtensionNames[i]) ==
                                           VK_KHR_SURFACE_EXTENSION_NAME;
    }
    record->instance = *instance;
    record->dispatch = load_instance_dispatch(*instance, next);
    if (const VkApplicationInfo* app = create_info->pApplicationInfo; app != nullptr) {
        record->application_name = app->pApplicationName != nullptr ? app->pApplicationName : "";
        record->engine_name = app->pEngineName != nullptr ? app->pEngineName : "";
    }
    static_cast<void>(layer_settings()); // a bad setting is logged once, here
    log_info("instance created for '" + record->application_name + "'");
    registry().add_instance(std::move(record));
    return VK_SUCCESS;
}

std::optional<std::size_t> end_device_generation(DeviceRecord& record);

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance,
                                           const VkAllocationCallbacks* allocator) {
    if (instance == VK_NULL_HANDLE) {
        return;
    }
    const std::shared_ptr<InstanceRecord> record = registry().remove_instance(instance);
    if (record == nullptr) {
        return;
    }
    // A device of the instance still open (the specification requires destroying it first):
    // its frame generation ends now, while the device can still destroy what it made, for the
    // loader may unload the layer with the instance.
    for (const std::shared_ptr<DeviceRecord>& device : registry().devices()) {
        if (!device->tandem_worker && device->instance == record &&
            end_device_generation(*device)) {
            log_problem("vkDestroyInstance with " + device->device_name +
                        " still open: its frame generation ends, its worker device is left open");
        }
    }
    if (record->dispatch.DestroyInstance != nullptr) {
        record->dispatch.DestroyInstance(instance, allocator);
    }
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical_device,
                                            const VkDeviceCreateInfo* create_info,
                                            const VkAllocationCallbacks* allocator,
                                            VkDevice* device) {
    auto* link = find_link<VkLayerDeviceCreateInfo>(create_info->pNext,
                                                    VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
    const std::shared_ptr<InstanceRecord> instance = registry().find_instance(physical_device);
    if (link == nullptr || link->u.pLayerInfo == nullptr || instance == nullptr) {
        log_problem("vkCreateDevice without the loader's layer link or on an instance the layer "
                    "did not see created");
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const PFN_vkGetInstanceProcAddr next_instance = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    const PFN_vkGetDeviceProcAddr next_device = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    const auto create =
        reinterpret_cast<PFN_vkCreateDevice>(next_instance(instance->instance, "vkCreateDevice"));
    if (create == nullptr) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    VkLayerDeviceLink* const below = link->u.pLayerInfo;
    auto record = std::make_shared<DeviceRecord>();
    record->tandem_worker = instance->tandem_opening.load() > 0;
    const bool wanted = layer_settings().uses_runtime() && !record->tandem_worker;
    VkResult result = VK_ERROR_INITIALIZATION_FAILED;
    bool added = false;
    if (wanted && !instance->raised_for_tandem) {
        record->set_pass_through("the loader refused the Vulkan 1.3 instance Tandem needs");
    } else if (wanted) {
        // Tandem's extensions and features, decided from the next layer's functions: the loader
        // holds its lock during vkCreateDevice.
        DeviceAdditions additions(instance->dispatch, physical_device, *create_info);
        record->set_loader_data = find_set_loader_data(create_info->pNext);
        if (layer_settings().queue == "own" && record->set_loader_data != nullptr) {
            additions.add_spare_queues(instance->dispatch, physical_device);
        }
        if (additions.refusal().empty()) {
            result = create(physical_device, &additions.create_info(), allocator, device);
            additions.restore();
            added = result == VK_SUCCESS;
            if (added) {
                record->enabled_extensions = additions.enabled_extensions();
                record->enabled_features = additions.enabled_features();
                record->spare_queues = additions.spare_queues();
                record->generation_possible = true;
            } else {
                record->set_pass_through("vkCreateDevice with Tandem's extensions and features "
                                         "failed (" +
                                         std::to_string(result) + ")");
                link->u.pLayerInfo = below;
            }
        } else {
            record->set_pass_through(additions.refusal());
        }
    }
    if (!added && record->tandem_worker && layer_settings().worker_displays()) {
        // Display on the worker: its device presents to the program's surface.
        std::vector<const char*> extensions;
        if (worker_swapchain_extensions(instance->dispatch, instance->surface_enabled,
                                        physical_device, *create_info, extensions)) {
            VkDeviceCreateInfo with_swapchain = *create_info;
            with_swapchain.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
            with_swapchain.ppEnabledExtensionNames = extensions.data();
            result = create(physical_device, &with_swapchain, allocator, device);
            added = result == VK_SUCCESS;
            record->swapchain_added = added;
            if (added) {
                record->enabled_extensions.assign(extensions.begin(), extensions.end());
            }
            if (!added) {
                link->u.pLayerInfo = below;
            }
        }
    }
    if (!added) {
        result = create(physical_device, create_info, allocator, device);
    }
    if (result != VK_SUCCESS) {
        return result;
    }
    record->device = *device;
    record->physical_device = physical_device;
    record->dispatch = load_device_dispatch(*device, next_device);
    record->instance = instance;
    if (instance->dispatch.GetPhysicalDeviceProperties != nullptr) {
        VkPhysicalDeviceProperties properties{};
        instance->dispatch.GetPhysicalDeviceProperties(physical_device, &properties);
        record->device_name = properties.deviceName;
    }
    if (record->tandem_worker) {
        log_info("device created for Tandem's worker: " + record->device_name +
                 (record->swapchain_added ? ", VK_KHR_swapchain added" : ""));
    } else if (wanted && !added) {
        // The one line the program's user sees: why no frame will be generated.
        log_problem("no frame generation on " + record->device_name + ": " +
                    record->pass_through_reason() + "; frames pass through");
    } else {
        log_info("device created: " + record->device_name +
                 (added ? ", Tandem's extensions and features added"
                        : ", " + layer_settings().pass_through_reason));
    }
    registry().add_device(std::move(record));
    return VK_SUCCESS;
}

// What the layer made for one swapchain, taken out of its record to be ended outside the device's
// lock.
struct SwapchainWork {
    std::shared_ptr<SwapchainGeneration> generation;
    std::shared_ptr<ScaledSwapchain> scaled;
    std::vector<TaskId> kept_tasks;
    bool counted = false; // it counts among the device's generating swapchains
    // Display on the worker: the real swapchain, destroyed there once the work ended; or the
    // one the program's device took back the display with, destroyed there.
    VkSwapchainKHR worker_swapchain = VK_NULL_HANDLE;
    std::shared_ptr<DeviceRecord> worker;
    VkSwapchainKHR program_swapchain = VK_NULL_HANDLE;
};

SwapchainWork take_work(SwapchainRecord& r) {
    SwapchainWork work;
    work.generation = std::move(r.generation);
    work.scaled = std::move(r.scaled);
    work.counted = r.generation_possible;
    work.kept_tasks = r.kept_tasks.all();
    r.kept_tasks = {};
    work.worker_swapchain = std::exchange(r.worker_swapchain, VK_NULL_HANDLE);
    work.worker = std::move(r.worker);
    work.program_swapchain = std::exchange(r.program_swapchain, VK_NULL_HANDLE);
    r.worker_display = nullptr;
    return work;
}

// Ends a swapchain's work before the swapchain (or its device) goes: the tasks it kept, its
// queued frames, the layer's and Tandem's work on its images, then the program's scaled images.
void end_work(DeviceRecord& record, SwapchainWork work) {
    if (!work.kept_tasks.empty()) {
        // Destroyed before its first present: the tasks it kept go with it.
        const std::lock_guard lock(record.generation_mutex);
        for (const TaskId task : work.kept_tasks) {
            if (record.generation) {
                static_cast<void>(record.generation->runtime().unregister_task(task));
            }
        }
    }
    if (work.generation) {
        // The frames queued go out (a replaced swapchain's went before it was retired), and the
        // layer's and Tandem's work on its images ends, before the images go.
        work.generation->flush();
        work.generation.reset();
    }
    if (work.worker_swapchain != VK_NULL_HANDLE && work.worker != nullptr) {
        work.worker->dispatch.DestroySwapchainKHR(work.worker->device, work.worker_swapchain,
                                                  nullptr);
    }
    work.scaled.reset(); // waits for the layer's batches, then frees the program's images
    if (work.program_swapchain != VK_NULL_HANDLE) {
        record.dispatch.DestroySwapchainKHR(record.device, work.program_swapchain, nullptr);
    }
}

// Ends the work of the device's swapchains for which `chosen(record)` holds (taken under the
// device's lock, ended outside it). Returns how many there were.
template <typename Chosen>
std::size_t end_swapchains(DeviceRecord& record, Chosen&& chosen) {
    std::vector<SwapchainWork> left;
    record.with_swapchains([&](SwapchainRecord& r) {
        if (chosen(r)) {
            left.push_back(take_work(r));
        }
    });
    for (SwapchainWork& work : left) {
        end_work(record, std::move(work));
    }
    return left.size();
}

// Ends everything the layer made on the program's device while the device can still destroy it:
// its swapchains' work (their queued frames go out), then the runtime, its worker left open (this
// runs inside vkDestroyDevice or vkDestroyInstance, where the loader holds the lock that
// destroying the worker takes). Returns the swapchains whose work it ended when a runtime ran
// there; nullopt when none did.
std::optional<std::size_t> end_device_generation(DeviceRecord& record) {
    const std::size_t left = end_swapchains(record, [](const SwapchainRecord&) { return true; });
    const std::lock_guard lock(record.generation_mutex);
    if (!record.generation) {
        return std::nullopt;
    }
    record.generation->runtime().leave_devices_open();
    record.generation.reset();
    return left;
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* allocator) {
    if (device == VK_NULL_HANDLE) {
        return;
    }
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr) {
        return;
    }
    // Swapchains still alive (the specification requires destroying them first): what the
    // layer made for them goes now, while the device can still destroy it (their last frames
    // presented and counted before the device's counts are kept), and so does the runtime, whose
    // threads would otherwise go on calling into the destroyed device. The swapchains themselves
    // are the program's.
    if (const std::optional<std::size_t> left = end_device_generation(*record)) {
        log_problem("vkDestroyDevice with " + std::to_string(*left) +
                    " swapchain(s) still alive: the frame-generation runtime ends with the "
                    "device, its worker device is left open");
    }
    static_cast<void>(registry().remove_device(device));
    if (record->dispatch.DestroyDevice != nullptr) {
        record->dispatch.DestroyDevice(device, allocator);
    }
    if (record->tandem_worker) {
        return;
    }
    log_info("device destroyed: " + record->device_name + ", " +
             std::to_string(record->frames_presented.load(std::memory_order_relaxed)) +
             " frames presented, " + std::to_string(record->generation_counts.generated.load()) +
             " generated");
    write_report_if_asked();
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue(VkDevice device, std::uint32_t family,
                                          std::uint32_t index, VkQueue* queue) {
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr || record->dispatch.GetDeviceQueue == nullptr) {
        *queue = VK_NULL_HANDLE;
        return;
    }
    record->dispatch.GetDeviceQueue(device, family, index, queue);
    if (*queue != VK_NULL_HANDLE) {
        record->note_queue(*queue, family, index);
        registry().add_queue(*queue, record);
    }
}

VKAPI_ATTR void VKAPI_CALL GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* info,
                                           VkQueue* queue) {
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr || record->dispatch.GetDeviceQueue2 == nullptr) {
        *queue = VK_NULL_HANDLE;
        return;
    }
    record->dispatch.GetDeviceQueue2(device, info, queue);
    if (*queue != VK_NULL_HANDLE) {
        record->note_queue(*queue, info->queueFamilyIndex, info->queueIndex);
        registry().add_queue(*queue, record);
    }
}

// Runs `call(device)` holding the queue's lock; VK_ERROR_DEVICE_LOST when the queue's device is
// unknown (a queue of a destroyed device).
template <typename Call>
VkResult on_queue(VkQueue queue, Call&& call) {
    const std::shared_ptr<DeviceRecord> device = registry().find_queue_device(queue);
    if (device == nullptr) {
        log_problem("a queue call on a queue of no device the layer knows");
        return VK_ERROR_DEVICE_LOST;
    }
    const std::shared_ptr<QueueRecord> record = device->queue_record(queue);
    const std::lock_guard lock(*record->mutex);
    return call(*device);
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit(VkQueue queue, std::uint32_t count,
                                           const VkSubmitInfo* submits, VkFence fence) {
    return on_queue(queue, [&](DeviceRecord& device) {
        return device.dispatch.QueueSubmit(queue, count, submits, fence);
    });
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2(VkQueue queue, std::uint32_t count,
                                            const VkSubmitInfo2* submits, VkFence fence) {
    return on_queue(queue, [&](DeviceRecord& device) {
        if (device.dispatch.QueueSubmit2 == nullptr) {
            return VK_ERROR_FEATURE_NOT_PRESENT;
        }
        return device.dispatch.QueueSubmit2(queue, count, submits, fence);
    });
}

VKAPI_ATTR VkResult VKAPI_CALL QueueSubmit2KHR(VkQueue queue, std::uint32_t count,
                                               const VkSubmitInfo2* submits, VkFence fence) {
    return on_queue(queue, [&](DeviceRecord& device) {
        if (device.dispatch.QueueSubmit2KHR == nullptr) {
            return VK_ERROR_EXTENSION_NOT_PRESENT;
        }
        return device.dispatch.QueueSubmit2KHR(queue, count, submits, fence);
    });
}

VKAPI_ATTR VkResult VKAPI_CALL QueueWaitIdle(VkQueue queue) {
    return on_queue(queue,
                    [&](DeviceRecord& device) { return device.dispatch.QueueWaitIdle(queue); });
}

VKAPI_ATTR VkResult VKAPI_CALL QueueBindSparse(VkQueue queue, std::uint32_t count,
                                               const VkBindSparseInfo* binds, VkFence fence) {
    return on_queue(queue, [&](DeviceRecord& device) {
        return device.dispatch.QueueBindSparse(queue, count, binds, fence);
    });
}

// A frame counts as presented when its swapchain's own result (pResults, else the call's) is
// VK_SUCCESS or VK_SUBOPTIMAL_KHR: the image was queued for the display either way.
std::uint64_t frames_presented(const VkPresentInfoKHR& info, VkResult result) {
    if (info.pResults == nullptr) {
        const bool queued = result == VK_SUCCESS || result == VK_SUBOPTIMAL_KHR;
        return queued ? info.swapchainCount : 0;
    }
    std::uint64_t frames = 0;
    for (std::uint32_t i = 0; i < info.swapchainCount; ++i) {
        frames += info.pResults[i] == VK_SUCCESS || info.pResults[i] == VK_SUBOPTIMAL_KHR;
    }
    return frames;
}

VkResult pass_through_present(VkQueue queue, const VkPresentInfoKHR* info) {
    return on_queue(queue, [&](DeviceRecord& device) {
        if (device.dispatch.QueuePresentKHR == nullptr) {
            return VK_ERROR_EXTENSION_NOT_PRESENT;
        }
        const VkResult result = device.dispatch.QueuePresentKHR(queue, info);
        // Relaxed: a counter for the report, ordered with nothing else.
        device.frames_presented.fetch_add(frames_presented(*info, result),
                                          std::memory_order_relaxed);
        return result;
    });
}

// The index of the queue the layer added for Tandem in `family` once it is dispatchable
// (DeviceRecord::spare_queues), or nullopt: Tandem shares the program's queue.
std::optional<std::uint32_t> tandem_queue(const DeviceRecord& device, std::uint32_t family) {
    const auto spare = device.spare_queues.find(family);
    if (spare == device.spare_queues.end() || device.dispatch.GetDeviceQueue == nullptr) {
        return std::nullopt;
    }
    VkQueue queue = VK_NULL_HANDLE;
    device.dispatch.GetDeviceQueue(device.device, family, spare->second, &queue);
    if (queue == VK_NULL_HANDLE || device.set_loader_data(device.device, queue) != VK_SUCCESS) {
        log_problem("the queue added for Tandem on " + device.device_name +
                    " could not be used: Tandem shares the program's");
        return std::nullopt;
    }
    return spare->second;
}

// The device's runtime, made on its first present (see DeviceRecord::generation); null when
// Tandem cannot run there (the reason is logged once and kept for the report).
DeviceGeneration* device_generation(DeviceRecord& device, VkQueue queue) {
    const std::lock_guard lock(device.generation_mutex);
    if (device.generation || device.generation_tried) {
        return device.generation.get();
    }
    device.generation_tried = true;
    const std::shared_ptr<QueueRecord> queue_record = device.queue_record(queue);
    if (queue_record->family == QueueRecord::k_unknown) {
        device.set_pass_through("the program presents on a queue the layer did not see it get");
    } else {
        try {
            device.generation = std::make_unique<DeviceGeneration>(
                device, queue, queue_record->family, queue_record->index, queue_record->mutex,
                tandem_queue(device, queue_record->family));
            log_info("frame generation on " + device.device_name + " with worker " +
                     device.generation->worker_name());
            note_exit_stop_point(ExitStopPoint::RuntimeStarted);
            return device.generation.get();
        } catch (const std::exception& e) {
            device.set_pass_through(std::string("Tandem could not start: ") + e.what());
        }
    }
    log_problem("no frame generation on " + device.device_name + ": " +
                device.pass_through_reason() + "; frames pass through");
    return nullptr;
}

// The swapchain's generation, made on its first present; null when its frames pass through.
std::shared_ptr<SwapchainGeneration> swapchain_generation(DeviceRecord& device, VkQueue queue,
                                                          VkSwapchainKHR swapchain) {
    std::shared_ptr<SwapchainGeneration> generation;
    bool wanted = false;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    VkPresentModeKHR present_mode = VK_PRESENT_MODE_FIFO_KHR;
    KeptTasks kept_tasks;
    std::shared_ptr<ScaledSwapchain> scaled;
    bool rgba8_readable = false;
    bool rgba8_writable = false;
    VkSwapchainKHR real = swapchain;
    DisplayQueue* display = nullptr;
    device.with_swapchain(swapchain, [&](SwapchainRecord& record) {
        if (record.worker_swapchain != VK_NULL_HANDLE) {
            real = record.worker_swapchain;
            display = record.worker_display;
        }
        rgba8_readable = record.rgba8_readable;
        rgba8_writable = record.rgba8_writable;
        generation = record.generation;
        scaled = record.scaled;
        present_mode = record.present_mode;
        if (record.generation_possible && !record.generation_tried) {
            kept_tasks = std::exchange(record.kept_tasks, {}); // its ids too, not only its vectors
        }
        wanted = record.generation_possible && !record.generation_tried;
        record.generation_tried = true;
        format = record.format;
        extent = record.scaled ? record.window_extent : record.extent;
    });
    if (generation || !wanted) {
        return generation;
    }
    DeviceGeneration* runtime = device_generation(device, queue);
    if (runtime == nullptr) {
        return nullptr;
    }
    if (scaled && scaled->queue() != runtime->queue()) {
        log_problem("a scaled swapchain presented on another queue than the one its images "
                    "are handed out on: the primary upscales its frames, the worker does not");
        return nullptr;
    }
    try {
        generation = std::make_shared<SwapchainGeneration>(
            *runtime, real, format, extent, *layer_settings().multiplier, device.generation_counts,
            device.frames_presented, present_mode, std::move(kept_tasks), scaled, rgba8_readable,
            rgba8_writable, display);
    } catch (const std::exception& e) {
        log_problem(std::string("no frame generation for a swapchain: ") + e.what());
        return nullptr;
    }
    device.with_swapchain(swapchain,
                          [&](SwapchainRecord& record) { record.generation = generation; });
    return generation;
}

std::shared_ptr<ScaledSwapchain> scaled_of(DeviceRecord& device, VkSwapchainKHR swapchain) {
    std::shared_ptr<ScaledSwapchain> scaled;
    device.with_swapchain(swapchain, [&](SwapchainRecord& record) { scaled = record.scaled; });
    return scaled;
}

void take_display_back(DeviceRecord& device, VkSwapchainKHR swapchain);

// A present of one image of a scaled swapchain, waiting for `info`'s semaphores: its frame
// tasks (the worker upscales it), or else the primary's blit. Its pNext chain does not apply to
// the images the layer presents in its place.
VkResult present_scaled_image(DeviceRecord& device, VkQueue queue, VkSwapchainKHR swapchain,
                              const std::shared_ptr<ScaledSwapchain>& scaled,
                              const VkPresentInfoKHR& info, std::uint32_t image) {
    VkPresentInfoKHR one{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    one.waitSemaphoreCount = info.waitSemaphoreCount;
    one.pWaitSemaphores = info.pWaitSemaphores;
    one.swapchainCount = 1;
    one.pSwapchains = &swapchain;
    one.pImageIndices = &image;
    if (device.generation_counts.worker_lost.load()) {
        take_display_back(device, swapchain); // where the lost worker was its display
    }
    if (const auto generation = swapchain_generation(device, queue, swapchain)) {
        return generation->present(one);
    }
    const std::vector<VkSemaphoreSubmitInfo> waits = present_waits(info);
    if (scaled->window_images().empty()) {
        // Its real swapchain is the worker's, and no generation runs for it (logged when it
        // could not start): the frame is not shown, and the image is the program's again once
        // its writes are done.
        const TimelinePoint written = scaled->signal_after(waits);
        scaled->release(image, std::span(&written, 1));
        device.generation_counts.real_not_shown.fetch_add(1, std::memory_order_relaxed);
        return VK_SUCCESS;
    }
    const VkResult result = scaled->blit_present(image, waits, {});
    device.generation_counts.blitted.fetch_add(1, std::memory_order_relaxed);
    device.frames_presented.fetch_add(result == VK_SUCCESS || result == VK_SUBOPTIMAL_KHR ? 1 : 0,
                                      std::memory_order_relaxed);
    return result;
}

// A present that names a scaled swapchain. One swapchain: its semaphores go to the present of
// its image. Several: their semaphores are waited for once, on the host, and each swapchain is
// presented on its own (the scaled ones by the layer, the others as asked).
VkResult present_with_scaled(DeviceRecord& device, VkQueue queue, const VkPresentInfoKHR& info,
                             const std::shared_ptr<ScaledSwapchain>& first_scaled) {
    if (info.swapchainCount == 1) {
        const VkResult result = present_scaled_image(device, queue, info.pSwapchains[0],
                                                     first_scaled, info, info.pImageIndices[0]);
        if (info.pResults != nullptr) {
            info.pResults[0] = result;
        }
        return result;
    }
    const std::vector<VkSemaphoreSubmitInfo> waits = present_waits(info);
    if (!first_scaled->wait(first_scaled->signal_after(waits))) {
        return VK_ERROR_DEVICE_LOST;
    }
    VkResult worst = VK_SUCCESS;
    for (std::uint32_t i = 0; i < info.swapchainCount; ++i) {
        VkPresentInfoKHR one{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
        one.swapchainCount = 1;
        one.pSwapchains = &info.pSwapchains[i];
        one.pImageIndices = &info.pImageIndices[i];
        VkResult result = VK_SUCCESS;
        if (const auto scaled = scaled_of(device, info.pSwapchains[i])) {
            result = present_scaled_image(device, queue, info.pSwapchains[i], scaled, one,
                                          info.pImageIndices[i]);
        } else {
            std::shared_ptr<SwapchainGeneration> held;
            device.with_swapchain(info.pSwapchains[i],
                                  [&](SwapchainRecord& record) { held = record.generation; });
            if (held) {
                held->flush(); // its frames held back go first
            }
            result = pass_through_present(queue, &one);
        }
        if (info.pResults != nullptr) {
            info.pResults[i] = result;
        }
        if (result < 0 || worst == VK_SUCCESS) {
            worst = worst < 0 ? worst : result;
        }
    }
    return worst;
}

VKAPI_ATTR VkResult VKAPI_CALL QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
    const std::shared_ptr<DeviceRecord> device = registry().find_queue_device(queue);
    if (device != nullptr) {
        device->generation_counts.note_present();
        for (std::uint32_t i = 0; i < info->swapchainCount; ++i) {
            if (const auto scaled = scaled_of(*device, info->pSwapchains[i])) {
                return present_with_scaled(*device, queue, *info, scaled);
            }
        }
    }
    if (device == nullptr || !device->generation_possible || info->swapchainCount == 0) {
        return pass_through_present(queue, info);
    }
    // Generation takes a present of one swapchain without extensions; for any other, the frames
    // held for its swapchains go out first, so that the order stays the program's.
    if (info->swapchainCount != 1 || info->pNext != nullptr) {
        for (std::uint32_t i = 0; i < info->swapchainCount; ++i) {
            std::shared_ptr<SwapchainGeneration> held;
            device->with_swapchain(info->pSwapchains[i],
                                   [&](SwapchainRecord& record) { held = record.generation; });
            if (held) {
                held->flush();
            }
        }
        return pass_through_present(queue, info);
    }
    const std::shared_ptr<SwapchainGeneration> generation =
        swapchain_generation(*device, queue, info->pSwapchains[0]);
    if (!generation) {
        return pass_through_present(queue, info);
    }
    const VkResult result = generation->present(*info);
    if (info->pResults != nullptr) {
        info->pResults[0] = result;
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL DeviceWaitIdle(VkDevice device) {
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr) {
        return VK_ERROR_DEVICE_LOST;
    }
    std::optional<DeviceGeneration::OwnQueue> tandem_queue;
    {
        const std::lock_guard lock(record->generation_mutex);
        if (record->generation) {
            tandem_queue = record->generation->own_queue();
        }
    }
    // vkDeviceWaitIdle needs every queue of the device externally synchronised: hold them all, in
    // one order (by handle) so that two callers cannot deadlock.
    // Tandem's own queue is not among them: Tandem gets it through the next layer
    // (EmbedInfo::get_device_proc_addr), so the layer never sees it got.
    std::vector<VkQueue> queues = record->queues();
    std::sort(queues.begin(), queues.end());
    std::vector<std::shared_ptr<QueueRecord>> held;
    std::vector<std::unique_lock<std::mutex>> locks;
    held.reserve(queues.size());
    locks.reserve(queues.size());
    for (const VkQueue queue : queues) {
        held.push_back(record->queue_record(queue));
        locks.emplace_back(*held.back()->mutex);
    }
    if (!tandem_queue) {
        return record->dispatch.DeviceWaitIdle(device);
    }
    // With a queue of Tandem's own, the program's batches may wait for values Tandem's threads
    // signal there later (a submit's input copies, submitted on Tandem's input thread): holding
    // Tandem's lock through one vkDeviceWaitIdle would never end (seen on the H100). So each
    // queue is waited for in turn, under its own lock: the program's, while Tandem's threads
    // still submit, then Tandem's.
    for (const VkQueue queue : queues) {
        if (const VkResult r = record->dispatch.QueueWaitIdle(queue); r != VK_SUCCESS) {
            return r;
        }
    }
    locks.clear();
    const std::lock_guard lock(*tandem_queue->mutex);
    return record->dispatch.QueueWaitIdle(tandem_queue->queue);
}

std::string present_mode_text(VkPresentModeKHR mode) {
    const std::string name = layer_config::present_mode_name(mode);
    return name.empty() ? "present mode " + std::to_string(static_cast<int>(mode)) : name;
}

// The configured present mode (layer_config.hpp) in place of the program's, where the surface
// supports it. Where it does not, or the program asked for a shared present mode (whose
// swapchains work differently), the program's stays: logged once per process, not per swapchain.
void apply_present_mode(const DeviceRecord& record, VkSwapchainCreateInfoKHR& info) {
    const LayerSettings& settings = layer_settings();
    if (!settings.present_mode || *settings.present_mode == info.presentMode) {
        return;
    }
    const std::string wanted = "present mode " + present_mode_text(*settings.present_mode) + " (" +
                               settings.present_mode_origin + ")";
    const auto keep = [&](const std::string& why) {
        static std::atomic<bool> told{false};
        if (!told.exchange(true)) {
            log_problem(wanted + " is not used: " + why + "; the program's " +
                        present_mode_text(info.presentMode) + " stays");
        }
    };
    if (info.presentMode == VK_PRESENT_MODE_SHARED_DEMAND_REFRESH_KHR ||
        info.presentMode == VK_PRESENT_MODE_SHARED_CONTINUOUS_REFRESH_KHR) {
        keep("the program asked for a shared present mode");
        return;
    }
    const InstanceRecord& instance = *record.instance;
    const auto modes_of = reinterpret_cast<PFN_vkGetPhysicalDeviceSurfacePresentModesKHR>(
        instance.dispatch.GetInstanceProcAddr(instance.instance,
                                              "vkGetPhysicalDeviceSurfacePresentModesKHR"));
    std::uint32_t count = 0;
    std::vector<VkPresentModeKHR> modes;
    if (modes_of != nullptr &&
        modes_of(record.physical_device, info.surface, &count, nullptr) == VK_SUCCESS) {
        modes.resize(count);
        if (modes_of(record.physical_device, info.surface, &count, modes.data()) < 0) {
            modes.clear();
        }
        modes.resize(std::min<std::size_t>(modes.size(), count));
    }
    if (std::find(modes.begin(), modes.end(), *settings.present_mode) == modes.end()) {
        keep(modes_of == nullptr ? "the surface's present modes cannot be queried"
                                 : "the surface does not support it");
        return;
    }
    log_info(wanted + " instead of the program's " + present_mode_text(info.presentMode));
    info.presentMode = *settings.present_mode;
}

// The handle the program's device knows for the swapchain the program names `old` in a
// vkCreateSwapchainKHR on that device: its own, or, where it names the layer's images of a
// display on the worker, the swapchain the program's device took the display back with (null
// while the worker has it, where nothing of the program's device is replaced).
VkSwapchainKHR replaced_on_device(DeviceRecord& record, VkSwapchainKHR old) {
    VkSwapchainKHR on_device = old;
    if (old != VK_NULL_HANDLE) {
        record.with_swapchain(old, [&](SwapchainRecord& r) {
            if (r.worker != nullptr) {
                on_device = r.program_swapchain;
            }
        });
    }
    return on_device;
}

// The swapchain a vkCreateSwapchainKHR replaces (`old`, may be null) is retired by that call: the
// frames held back for it go out first, while it can still show them, so that a resize loses no
// frame of the program's. Its generation, or null.
std::shared_ptr<SwapchainGeneration> flush_replaced(DeviceRecord& record, VkSwapchainKHR old) {
    std::shared_ptr<SwapchainGeneration> replaced;
    if (old != VK_NULL_HANDLE) {
        record.with_swapchain(old, [&](SwapchainRecord& r) { replaced = r.generation; });
        if (replaced) {
            replaced->flush();
        }
    }
    return replaced;
}

// The features `physical` gives `format` in optimal tiling (none without the query's function).
VkFormatFeatureFlags optimal_features(const InstanceDispatch& vk, VkPhysicalDevice physical,
                                      VkFormat format) {
    VkFormatProperties features{};
    if (vk.GetPhysicalDeviceFormatProperties != nullptr) {
        vk.GetPhysicalDeviceFormatProperties(physical, format, &features);
    }
    return features.optimalTilingFeatures;
}

// A swapchain's image count: what the program asked for and `more` of the layer's own, within
// what the surface allows (maxImageCount 0: no limit).
std::uint32_t with_more_images(std::uint32_t asked, std::uint32_t more,
                               const VkSurfaceCapabilitiesKHR& capabilities) {
    return capabilities.maxImageCount == 0 ? asked + more
                                           : std::min(asked + more, capabilities.maxImageCount);
}

// True where a format's images may be the source and the destination of vkCmdBlitImage: the
// scaled swapchains' upscale on the primary (ScaledSwapchain::blit_present).
bool blits(VkFormatFeatureFlags features) {
    constexpr VkFormatFeatureFlags k_blit =
        VK_FORMAT_FEATURE_BLIT_SRC_BIT | VK_FORMAT_FEATURE_BLIT_DST_BIT;
    return (features & k_blit) == k_blit;
}

// The window's size: the surface's own, or (where the program chooses, as on Wayland) the
// program's divided by `scale`, within the surface's bounds.
VkExtent2D window_extent(const VkSwapchainCreateInfoKHR& program,
                         const VkSurfaceCapabilitiesKHR& capabilities, double scale) {
    if (capabilities.currentExtent.width != UINT32_MAX) {
        return capabilities.currentExtent;
    }
    const auto side = [&](std::uint32_t length, std::uint32_t least, std::uint32_t most) {
        const auto unscaled = static_cast<std::uint32_t>(std::lround(length / scale));
        return std::clamp(unscaled, least, most);
    };
    return {side(program.imageExtent.width, capabilities.minImageExtent.width,
                 capabilities.maxImageExtent.width),
            side(program.imageExtent.height, capabilities.minImageExtent.height,
                 capabilities.maxImageExtent.height)};
}

// Whether a swapchain of the layer's images (scaled, or on the worker's display: `on_worker`)
// made as `program` asks, the real one at `window`, may take over the tasks of `replaced`, which
// it replaces (KeptTasks): of the same kind, format and sizes, they go on prepared.
bool same_tasks(const SwapchainGeneration& replaced, bool on_worker,
                const VkSwapchainCreateInfoKHR& program, VkExtent2D window) {
    const auto same = [](VkExtent2D a, VkExtent2D b) {
        return a.width == b.width && a.height == b.height;
    };
    return replaced.scaled() && replaced.on_worker() == on_worker &&
           replaced.format() == program.imageFormat && same(replaced.extent(), window) &&
           same(replaced.program_extent(), program.imageExtent);
}

// The program's images of a swapchain the layer stands in for (ScaledSwapchain): made as the
// program asked for its swapchain's, at `extent`, the layer's batches for them on `queue`.
ScaledSwapchain::Desc program_images_desc(DeviceRecord& record,
                                          const VkSwapchainCreateInfoKHR& program,
                                          VkExtent2D window, VkQueue queue) {
    const std::shared_ptr<QueueRecord> queue_record = record.queue_record(queue);
    ScaledSwapchain::Desc desc;
    desc.device = record.device;
    desc.vk = &record.dispatch;
    const InstanceDispatch& instance = record.instance->dispatch;
    if (instance.GetPhysicalDeviceMemoryProperties != nullptr) {
        instance.GetPhysicalDeviceMemoryProperties(record.physical_device, &desc.memory);
    }
    desc.format = program.imageFormat;
    desc.program_extent = program.imageExtent;
    desc.window_extent = window;
    desc.usage = program.imageUsage;
    desc.sharing = program.imageSharingMode;
    if (program.imageSharingMode == VK_SHARING_MODE_CONCURRENT) {
        desc.families.assign(program.pQueueFamilyIndices,
                             program.pQueueFamilyIndices + program.queueFamilyIndexCount);
    }
    desc.image_count = std::max(program.minImageCount + 1, 2u);
    desc.queue = queue;
    desc.queue_family = queue_record->family;
    desc.queue_mutex = queue_record->mutex;
    return desc;
}

// Scaling: the real swapchain at the window's size and the program's images at the size it asked
// for (scaled_swapchain.hpp). Nothing (the swapchain made as usual, one log line saying why) where
// the program's swapchain is not one the layer can stand in for; else the call's result.
std::optional<VkResult> create_scaled_swapchain(DeviceRecord& record,
                                                const VkSwapchainCreateInfoKHR& program,
                                                const VkSurfaceCapabilitiesKHR& capabilities,
                                                const VkAllocationCallbacks* allocator,
                                                VkSwapchainKHR* swapchain) {
    const VkExtent2D window = window_extent(program, capabilities, layer_settings().scale);
    const auto not_scaled = [&](const std::string& why) -> std::optional<VkResult> {
        log_problem("a swapchain of " + std::to_string(program.imageExtent.width) + "x" +
                    std::to_string(program.imageExtent.height) + " is not scaled: " + why);
        return std::nullopt;
    };
    if (!record.generation_possible) {
        return std::nullopt; // the device has no runtime: its surfaces were not scaled either
    }
    if (window.width == program.imageExtent.width && window.height == program.imageExtent.height) {
        return std::nullopt; // the program asked for the window's size: nothing to upscale
    }
    // The worker's frames are RGBA8: another format is still scaled, by the primary alone.
    const bool worker_frames = worker_takes_format(program.imageFormat);
    if (program.imageArrayLayers != 1 || program.flags != 0) {
        return not_scaled("it is layered or has creation flags");
    }
    if ((capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) == 0) {
        return not_scaled("its surface allows no transfer-destination images");
    }
    const InstanceDispatch& instance = record.instance->dispatch;
    VkImageFormatProperties image_format{};
    if (instance.GetPhysicalDeviceImageFormatProperties == nullptr ||
        instance.GetPhysicalDeviceImageFormatProperties(
            record.physical_device, program.imageFormat, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL,
            program.imageUsage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0, &image_format) != VK_SUCCESS) {
        return not_scaled("the device cannot make plain images of its format and usage");
    }
    const VkFormatFeatureFlags features =
        optimal_features(instance, record.physical_device, program.imageFormat);
    if (!blits(features)) {
        return not_scaled("the device cannot blit its format");
    }
    // The primary's upscale filters linearly where the device can for this format (10-bit ones
    // on some drivers cannot): else each window texel takes its nearest program texel.
    const bool linear = (features & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT) != 0;
    const std::vector<VkQueue> queues = record.queues();
    const std::shared_ptr<QueueRecord> queue_record =
        queues.empty() ? nullptr : record.queue_record(queues.front());
    if (queue_record == nullptr || queue_record->family == QueueRecord::k_unknown) {
        return not_scaled("the program has no queue the layer saw it get");
    }

    VkSwapchainCreateInfoKHR real = program;
    real.imageExtent = window;
    real.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                      (capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    real.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    real.queueFamilyIndexCount = 0;
    real.pQueueFamilyIndices = nullptr;
    constexpr std::uint32_t k_more_images = 2; // generated frames and the real one in flight
    real.minImageCount = with_more_images(program.minImageCount, k_more_images, capabilities);
    const std::shared_ptr<SwapchainGeneration> replaced =
        flush_replaced(record, program.oldSwapchain);
    real.oldSwapchain = replaced_on_device(record, program.oldSwapchain);
    if (const VkResult r =
            record.dispatch.CreateSwapchainKHR(record.device, &real, allocator, swapchain);
        r != VK_SUCCESS) {
        return r;
    }
    ScaledSwapchain::Desc desc = program_images_desc(record, program, window, queues.front());
    desc.swapchain = *swapchain;
    desc.filter = linear ? VK_FILTER_LINEAR : VK_FILTER_NEAREST;
    std::shared_ptr<ScaledSwapchain> scaled;
    try {
        scaled = std::make_shared<ScaledSwapchain>(desc);
    } catch (const std::exception& e) {
        record.dispatch.DestroySwapchainKHR(record.device, *swapchain, allocator);
        *swapchain = VK_NULL_HANDLE;
        log_problem(std::string("a scaled swapchain could not be made: ") + e.what());
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    SwapchainRecord swapchain_record;
    // Recreated at the same sizes and format (a program that recreates its swapchain whenever
    // its window's size differs from the one it was given, as libplacebo does: each frame), the
    // replaced swapchain's tasks go on, prepared.
    if (replaced && worker_frames && same_tasks(*replaced, false, program, window)) {
        swapchain_record.kept_tasks = replaced->take_tasks();
    }
    swapchain_record.surface = program.surface;
    swapchain_record.format = program.imageFormat;
    swapchain_record.extent = program.imageExtent;
    swapchain_record.window_extent = window;
    swapchain_record.present_mode = program.presentMode;
    swapchain_record.usage = program.imageUsage;
    swapchain_record.generation_possible = worker_frames;
    swapchain_record.scaled = std::move(scaled);
    record.add_swapchain(*swapchain, std::move(swapchain_record));
    if (worker_frames) {
        const std::lock_guard lock(record.generation_mutex);
        ++record.generating_swapchains;
    } else {
        log_problem(std::string("a swapchain's format is not an 8-bit RGBA or BGRA one: the "
                                "primary upscales its frames") +
                    (linear ? "" : " (the nearest texel: the device cannot filter the format)") +
                    ", and none is generated");
    }
    record.swapchains_created.fetch_add(1, std::memory_order_relaxed);
    {
        const std::lock_guard lock(record.generation_counts.summary_mutex);
        record.generation_counts.scaling =
            GenerationCounts::ScalingExtents{program.imageExtent, window};
    }
    log_info("swapchain created: " + std::to_string(window.width) + "x" +
             std::to_string(window.height) + ", the program's images " +
             std::to_string(program.imageExtent.width) + "x" +
             std::to_string(program.imageExtent.height) + " upscaled to it");
    return VK_SUCCESS;
}

// Display on the worker, the worker lost: the program's device takes the display back, so that
// the program's frames are shown again (passed through; nothing else could show them). The
// swapchain's generation ends (its presenter used the worker's swapchain), the worker's
// swapchain goes, and one made on the program's device on the same surface, alike but for the
// usage the primary's blit needs, takes each presented image (ScaledSwapchain::blit_present).
// Nothing where the worker was not its display; where the program's device cannot take it, one
// log line says why and its frames are not shown, as before.
void take_display_back(DeviceRecord& device, VkSwapchainKHR swapchain) {
    std::shared_ptr<SwapchainGeneration> generation;
    std::shared_ptr<ScaledSwapchain> scaled;
    std::shared_ptr<DeviceRecord> worker;
    VkSwapchainKHR worker_swapchain = VK_NULL_HANDLE;
    VkSwapchainCreateInfoKHR real{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    device.with_swapchain(swapchain, [&](SwapchainRecord& r) {
        if (r.worker_swapchain == VK_NULL_HANDLE || !r.scaled) {
            return;
        }
        generation = std::exchange(r.generation, nullptr);
        r.generation_tried = true; // no generation from now on: the frames pass through
        worker_swapchain = std::exchange(r.worker_swapchain, VK_NULL_HANDLE);
        r.worker_display = nullptr;
        worker = r.worker;
        scaled = r.scaled;
        real.surface = r.surface;
        real.minImageCount = r.asked.min_image_count;
        real.imageFormat = r.format;
        real.imageColorSpace = r.asked.color_space;
        real.imageExtent = r.window_extent;
        real.presentMode = r.present_mode;
        real.preTransform = r.asked.transform;
        real.compositeAlpha = r.asked.alpha;
        real.clipped = r.asked.clipped;
    });
    if (worker_swapchain == VK_NULL_HANDLE) {
        return;
    }
    const auto not_taken = [&](const std::string& why) {
        log_problem("the worker that showed a swapchain's frames was lost, and the program's "
                    "device cannot show them in its place (" +
                    why + "): they are not shown");
    };
    // Its frames held back go first (with the worker lost, as far as they can), and the work
    // on the worker's swapchain ends before it goes.
    if (generation) {
        generation->flush();
        scaled->settle_readers(); // some are points of the generation's timeline
        generation.reset();
    }
    worker->dispatch.DestroySwapchainKHR(worker->device, worker_swapchain, nullptr);
    device.generation_counts.displays_taken_back.fetch_add(1, std::memory_order_relaxed);

    const InstanceDispatch& instance = device.instance->dispatch;
    VkSurfaceCapabilitiesKHR capabilities{};
    if (instance.GetPhysicalDeviceSurfaceCapabilitiesKHR == nullptr ||
        instance.GetPhysicalDeviceSurfaceCapabilitiesKHR(device.physical_device, real.surface,
                                                         &capabilities) != VK_SUCCESS) {
        not_taken("the surface's capabilities cannot be read there");
        return;
    }
    if ((capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) == 0 ||
        !blits(optimal_features(instance, device.physical_device, real.imageFormat))) {
        not_taken("it cannot blit into the surface's images");
        return;
    }
    constexpr std::uint32_t k_more_images = 1; // the layer's blit in flight
    real.minImageCount = std::max(with_more_images(real.minImageCount, k_more_images, capabilities),
                                  capabilities.minImageCount);
    real.imageArrayLayers = 1;
    real.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    real.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkSwapchainKHR made = VK_NULL_HANDLE;
    VkResult result = device.dispatch.CreateSwapchainKHR(device.device, &real, nullptr, &made);
    if (result != VK_SUCCESS && real.presentMode != VK_PRESENT_MODE_FIFO_KHR) {
        real.presentMode = VK_PRESENT_MODE_FIFO_KHR; // every device presents so
        result = device.dispatch.CreateSwapchainKHR(device.device, &real, nullptr, &made);
    }
    if (result != VK_SUCCESS) {
        not_taken("vkCreateSwapchainKHR returned " + std::to_string(result));
        return;
    }
    try {
        scaled->present_to(made);
    } catch (const std::exception& e) {
        device.dispatch.DestroySwapchainKHR(device.device, made, nullptr);
        not_taken(e.what());
        return;
    }
    device.with_swapchain(swapchain, [&](SwapchainRecord& r) { r.program_swapchain = made; });
    log_problem("the worker that showed a swapchain's frames was lost: the program's device "
                "shows them from now on (" +
                std::to_string(real.imageExtent.width) + "x" +
                std::to_string(real.imageExtent.height) + ", passed through)");
}

// The swapchain's images made readable through an RGBA8 view with sampled usage, so that the
// runtime copies each presented frame into Tandem's RGBA8 input with a compute dispatch
// (TaskInputDesc::application_usage): an RGBA8 swapchain needs only the usage; a BGRA8 or sRGB
// one is also made with mutable formats (VK_KHR_swapchain_mutable_format, which the layer
// enables where the device offers it), RGBA8 among them. False, `info` unchanged, where the
// surface or the device does not allow it, or the program made its swapchain mutable itself.
struct RgbaFormatList {
    std::array<VkFormat, 2> formats{};
    VkImageFormatListCreateInfo list{VK_STRUCTURE_TYPE_IMAGE_FORMAT_LIST_CREATE_INFO};
};

bool make_rgba8_readable(const DeviceRecord& record, VkSwapchainCreateInfoKHR& info,
                         const VkSurfaceCapabilitiesKHR& capabilities, RgbaFormatList& list) {
    if ((capabilities.supportedUsageFlags & VK_IMAGE_USAGE_SAMPLED_BIT) == 0 ||
        (info.flags & VK_SWAPCHAIN_CREATE_MUTABLE_FORMAT_BIT_KHR) != 0) {
        return false;
    }
    if (info.imageFormat != VK_FORMAT_R8G8B8A8_UNORM) {
        const bool mutable_formats =
            std::find(record.enabled_extensions.begin(), record.enabled_extensions.end(),
                      VK_KHR_SWAPCHAIN_MUTABLE_FORMAT_EXTENSION_NAME) !=
            record.enabled_extensions.end();
        if (!mutable_formats) {
            return false;
        }
        list.formats = {info.imageFormat, VK_FORMAT_R8G8B8A8_UNORM};
        list.list.viewFormatCount = static_cast<std::uint32_t>(list.formats.size());
        list.list.pViewFormats = list.formats.data();
        list.list.pNext = info.pNext;
        info.pNext = &list.list;
        info.flags |= VK_SWAPCHAIN_CREATE_MUTABLE_FORMAT_BIT_KHR;
    }
    info.imageUsage |= VK_IMAGE_USAGE_SAMPLED_BIT;
    return true;
}

// With the swapchain readable so, also writable through an RGBA8 storage view, so that the layer
// copies the worker's frames into it by a compute dispatch (frame_copy.hpp): where the surface
// allows storage usage and the copies setting asks for compute copies (auto: on a GPU, not on a
// CPU device, where the copy command is a memcpy). Storage usage may cost the program's own
// rendering into the images on some GPUs (compression off): `copies = command` leaves it out.
bool make_rgba8_writable(const DeviceRecord& record, VkSwapchainCreateInfoKHR& info,
                         const VkSurfaceCapabilitiesKHR& capabilities) {
    if ((capabilities.supportedUsageFlags & VK_IMAGE_USAGE_STORAGE_BIT) == 0) {
        return false;
    }
    const std::string& copies = layer_settings().copies;
    bool gpu = true;
    if (record.instance->dispatch.GetPhysicalDeviceProperties != nullptr) {
        VkPhysicalDeviceProperties properties{};
        record.instance->dispatch.GetPhysicalDeviceProperties(record.physical_device, &properties);
        gpu = properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    }
    if (copies == "command" || (copies == "auto" && !gpu)) {
        return false;
    }
    info.imageUsage |= VK_IMAGE_USAGE_STORAGE_BIT;
    return true;
}

// Takes back make_rgba8_readable's and make_rgba8_writable's additions (what the program asked for
// is in `program`).
void undo_rgba8_readable(VkSwapchainCreateInfoKHR& info, const VkSwapchainCreateInfoKHR& program,
                         const RgbaFormatList& list) {
    if (info.pNext == &list.list) {
        info.pNext = list.list.pNext;
    }
    info.flags = (info.flags & ~VK_SWAPCHAIN_CREATE_MUTABLE_FORMAT_BIT_KHR) |
                 (program.flags & VK_SWAPCHAIN_CREATE_MUTABLE_FORMAT_BIT_KHR);
    constexpr VkImageUsageFlags added = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT;
    info.imageUsage = (info.imageUsage & ~added) | (program.imageUsage & added);
}

// The program's device extensions whose calls name a swapchain beyond those the layer answers
// for a swapchain on the worker (create, destroy, images, acquire, present): with any of them
// enabled, the program keeps its own swapchain.
bool names_swapchains_elsewhere(const DeviceRecord& record) {
    constexpr std::array<std::string_view, 7> k_extensions{
        VK_KHR_PRESENT_WAIT_EXTENSION_NAME,
        VK_EXT_SWAPCHAIN_MAINTENANCE_1_EXTENSION_NAME,
        VK_GOOGLE_DISPLAY_TIMING_EXTENSION_NAME,
        VK_EXT_HDR_METADATA_EXTENSION_NAME,
        VK_KHR_SHARED_PRESENTABLE_IMAGE_EXTENSION_NAME,
        VK_EXT_DISPLAY_CONTROL_EXTENSION_NAME,
        VK_AMD_DISPLAY_NATIVE_HDR_EXTENSION_NAME};
    return std::any_of(record.enabled_extensions.begin(), record.enabled_extensions.end(),
                       [&](const std::string& name) {
                           return std::find(k_extensions.begin(), k_extensions.end(), name) !=
                                  k_extensions.end();
                       });
}

// Display on the worker (display = worker): the real swapchain made on the worker's device, on
// the program's surface, and the program given images of the layer's own at the size it asked
// for (a ScaledSwapchain without a swapchain of its own), its handle naming them. Nothing (the
// swapchain made on the program's device as usual, one log line saying why) where the worker
// cannot present there or the swapchain is not one the layer can stand in for; else the call's
// result. The program's allocator is for its own device: what the layer makes on the worker's
// takes none.
std::optional<VkResult>
create_worker_display_swapchain(DeviceRecord& record, const VkSwapchainCreateInfoKHR& program,
                                const VkSurfaceCapabilitiesKHR& program_capabilities,
                                VkSwapchainKHR* swapchain) {
    const auto on_program = [&](const std::string& why) -> std::optional<VkResult> {
        log_problem("a swapchain of " + std::to_string(program.imageExtent.width) + "x" +
                    std::to_string(program.imageExtent.height) +
                    " is presented by the program's device, not the worker: " + why);
        return std::nullopt;
    };
    if (!record.generation_possible) {
        return std::nullopt; // the device has no runtime: its frames pass through
    }
    if (!worker_takes_format(program.imageFormat) || program.imageArrayLayers != 1 ||
        program.flags != 0) {
        return on_program("its format is not an 8-bit RGBA or BGRA one, or it is layered or has "
                          "creation flags");
    }
    if (layer_settings().verify) {
        return on_program("verify mode compares frames on the program's device");
    }
    if (names_swapchains_elsewhere(record)) {
        return on_program("the program's device has an extension whose calls name swapchains "
                          "that the layer does not answer for");
    }
    if (record.generation_counts.worker_lost.load()) {
        return on_program("the worker was lost");
    }
    VkSwapchainKHR old_worker = VK_NULL_HANDLE;
    bool old_on_program = false;
    if (program.oldSwapchain != VK_NULL_HANDLE) {
        old_on_program = true;
        record.with_swapchain(program.oldSwapchain, [&](SwapchainRecord& r) {
            old_worker = r.worker_swapchain;
            old_on_program = r.worker_swapchain == VK_NULL_HANDLE;
        });
    }
    if (old_on_program) {
        return on_program("it replaces a swapchain of the program's device");
    }
    const std::vector<VkQueue> queues = record.queues();
    if (queues.empty()) {
        return on_program("the program has no queue the layer saw it get");
    }
    DeviceGeneration* generation = device_generation(record, queues.front());
    if (generation == nullptr) {
        return std::nullopt; // logged: frames pass through
    }
    std::string why;
    DisplayQueue* display = generation->worker_display(program.surface, why);
    const std::shared_ptr<DeviceRecord> worker = generation->worker_record();
    if (display == nullptr || worker == nullptr) {
        return on_program(why);
    }
    VkSurfaceCapabilitiesKHR capabilities{};
    const auto capabilities_of = record.instance->dispatch.GetPhysicalDeviceSurfaceCapabilitiesKHR;
    if (capabilities_of == nullptr ||
        capabilities_of(worker->physical_device, program.surface, &capabilities) != VK_SUCCESS) {
        return on_program("the worker cannot read the surface's capabilities");
    }
    if ((capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) == 0) {
        return on_program("the surface allows the worker no transfer-destination images");
    }

    // Scaling: the program's images at the size it asked for, the worker's swapchain at the
    // window's (each real and generated frame upscaled on the worker).
    const VkExtent2D window =
        layer_settings().scales()
            ? window_extent(program, program_capabilities, layer_settings().scale)
            : program.imageExtent;
    VkSwapchainCreateInfoKHR real = program;
    real.pNext = nullptr; // the program's extensions speak of its own device
    real.imageExtent = window;
    // Transfer source: the dump reads each frame back as presented.
    real.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                      (capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    real.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    real.queueFamilyIndexCount = 0;
    real.pQueueFamilyIndices = nullptr;
    real.oldSwapchain = old_worker;
    // Each frame copied in by a compute dispatch, as on the program's device (copies = auto:
    // where the worker is a GPU), where the surface and the worker's device allow it; else (or
    // where the swapchain cannot be made so) by the copy command.
    RgbaFormatList format_list;
    bool rgba8_writable = make_rgba8_readable(*worker, real, capabilities, format_list) &&
                          make_rgba8_writable(*worker, real, capabilities);
    if (!rgba8_writable) {
        undo_rgba8_readable(real, program, format_list);
        real.imageUsage &= ~(VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT);
    }
    constexpr std::uint32_t k_more_images = 2; // generated frames and the real one in flight
    real.minImageCount = with_more_images(program.minImageCount, k_more_images, capabilities);
    apply_present_mode(record, real);
    const std::shared_ptr<SwapchainGeneration> replaced =
        flush_replaced(record, program.oldSwapchain);
    VkSwapchainKHR made = VK_NULL_HANDLE;
    VkResult created = worker->dispatch.CreateSwapchainKHR(worker->device, &real, nullptr, &made);
    if (created != VK_SUCCESS && rgba8_writable) {
        undo_rgba8_readable(real, program, format_list);
        real.imageUsage &= ~(VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT);
        rgba8_writable = false;
        created = worker->dispatch.CreateSwapchainKHR(worker->device, &real, nullptr, &made);
    }
    if (created != VK_SUCCESS) {
        return created;
    }
    ScaledSwapchain::Desc desc = program_images_desc(record, program, window, queues.front());
    desc.rgba8_views = true;
    std::shared_ptr<ScaledSwapchain> images;
    try {
        images = std::make_shared<ScaledSwapchain>(desc);
    } catch (const std::exception& e) {
        worker->dispatch.DestroySwapchainKHR(worker->device, made, nullptr);
        log_problem(std::string("the program's images for a swapchain on the worker could not "
                                "be made: ") +
                    e.what());
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    SwapchainRecord swapchain_record;
    if (replaced && same_tasks(*replaced, true, program, window)) {
        swapchain_record.kept_tasks = replaced->take_tasks();
    }
    swapchain_record.surface = program.surface;
    swapchain_record.format = program.imageFormat;
    swapchain_record.extent = program.imageExtent;
    swapchain_record.window_extent = window;
    swapchain_record.present_mode = real.presentMode;
    swapchain_record.usage = program.imageUsage;
    swapchain_record.rgba8_readable = true;
    swapchain_record.rgba8_writable = rgba8_writable;
    swapchain_record.generation_possible = true;
    swapchain_record.scaled = images;
    swapchain_record.worker_swapchain = made;
    swapchain_record.worker = worker;
    swapchain_record.worker_display = display;
    swapchain_record.asked = {program.minImageCount, program.imageColorSpace, program.preTransform,
                              program.compositeAlpha, program.clipped};
    // The program's handle: the address of its images' record, which no other object of the
    // process has, and which only this layer ever sees named.
    *swapchain = reinterpret_cast<VkSwapchainKHR>(images.get());
    record.add_swapchain(*swapchain, std::move(swapchain_record));
    {
        const std::lock_guard lock(record.generation_mutex);
        ++record.generating_swapchains;
    }
    record.swapchains_created.fetch_add(1, std::memory_order_relaxed);
    const bool scaled =
        window.width != program.imageExtent.width || window.height != program.imageExtent.height;
    if (scaled) {
        const std::lock_guard lock(record.generation_counts.summary_mutex);
        record.generation_counts.scaling =
            GenerationCounts::ScalingExtents{program.imageExtent, window};
    }
    log_info("swapchain created on the worker (" + worker->device_name +
             "): " + std::to_string(window.width) + "x" + std::to_string(window.height) +
             ", the program's images " + std::to_string(program.imageExtent.width) + "x" +
             std::to_string(program.imageExtent.height) + " cross to it once a frame" +
             (scaled ? ", upscaled there" : ""));
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateSwapchainKHR(VkDevice device,
                                                  const VkSwapchainCreateInfoKHR* create_info,
                                                  const VkAllocationCallbacks* allocator,
                                                  VkSwapchainKHR* swapchain) {
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr || record->dispatch.CreateSwapchainKHR == nullptr) {
        return VK_ERROR_EXTENSION_NOT_PRESENT;
    }
    VkSwapchainCreateInfoKHR info = *create_info;
    apply_present_mode(*record, info);
    bool transfer_src_added = false;
    bool generation_possible = false;
    bool rgba8_readable = false;
    bool rgba8_writable = false;
    RgbaFormatList format_list;
    // supportedUsageFlags speak for the FIFO, mailbox and immediate modes only; a shared present
    // mode has its own usage flags, and its swapchain is left as asked.
    const bool shared_present = info.presentMode == VK_PRESENT_MODE_SHARED_DEMAND_REFRESH_KHR ||
                                info.presentMode == VK_PRESENT_MODE_SHARED_CONTINUOUS_REFRESH_KHR;
    const auto capabilities_of = record->instance->dispatch.GetPhysicalDeviceSurfaceCapabilitiesKHR;
    VkSurfaceCapabilitiesKHR capabilities{};
    const bool known =
        !shared_present && capabilities_of != nullptr &&
        capabilities_of(record->physical_device, info.surface, &capabilities) == VK_SUCCESS;
    if (!shared_present && known && layer_settings().worker_displays()) {
        if (const std::optional<VkResult> made =
                create_worker_display_swapchain(*record, info, capabilities, swapchain)) {
            return *made;
        }
    }
    if (!shared_present && known && layer_settings().scales()) {
        if (const std::optional<VkResult> made =
                create_scaled_swapchain(*record, info, capabilities, allocator, swapchain)) {
            return *made;
        }
    }
    if ((info.imageUsage & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) == 0 && !shared_present) {
        if (known && (capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0) {
            info.imageUsage |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
            transfer_src_added = true;
        } else {
            log_info("the surface does not allow transfer-source swapchain images: the "
                     "swapchain's usage is left as the program asked");
        }
    }
    // Generated frames are copied into images of the swapchain (transfer destination), and each
    // real frame is held for one present: two more images than the program asked for, so that
    // its own acquires never wait for the layer's.
    constexpr std::uint32_t k_more_images = 2;
    const bool worker_format = worker_takes_format(info.imageFormat);
    if (record->generation_possible && known && worker_format && info.imageArrayLayers == 1 &&
        (info.imageUsage & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0 &&
        (capabilities.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT) != 0 &&
        (capabilities.maxImageCount == 0 ||
         info.minImageCount + k_more_images <= capabilities.maxImageCount)) {
        info.imageUsage |= VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        info.minImageCount += k_more_images;
        generation_possible = true;
        rgba8_readable = make_rgba8_readable(*record, info, capabilities, format_list);
        rgba8_writable = rgba8_readable && make_rgba8_writable(*record, info, capabilities);
    } else if (record->generation_possible && !worker_format) {
        log_problem("no frame generation for a swapchain of " +
                    std::to_string(info.imageExtent.width) + "x" +
                    std::to_string(info.imageExtent.height) +
                    ": its format is not an 8-bit RGBA or BGRA one, the only ones the worker's "
                    "frames take; its frames pass through");
    } else if (record->generation_possible) {
        log_problem("no frame generation for a swapchain of " +
                    std::to_string(info.imageExtent.width) + "x" +
                    std::to_string(info.imageExtent.height) +
                    ": its surface allows no transfer usage or two more images (or it is "
                    "shared or layered); its frames pass through");
    }
    const std::shared_ptr<SwapchainGeneration> replaced =
        flush_replaced(*record, info.oldSwapchain);
    info.oldSwapchain = replaced_on_device(*record, info.oldSwapchain);
    VkResult result = record->dispatch.CreateSwapchainKHR(device, &info, allocator, swapchain);
    if (result != VK_SUCCESS && rgba8_readable) {
        // Made as the program asked but for generation's own usage: its frames are copied by
        // the copy command.
        log_info("a swapchain with images Tandem may sample could not be created (" +
                 std::to_string(result) + "): made without");
        undo_rgba8_readable(info, *create_info, format_list);
        rgba8_readable = false;
        rgba8_writable = false;
        result = record->dispatch.CreateSwapchainKHR(device, &info, allocator, swapchain);
    }
    if (result != VK_SUCCESS) {
        return result;
    }
    SwapchainRecord swapchain_record;
    // Recreated in the same format: the replaced swapchain's tasks go on. At the same size
    // (after VK_SUBOPTIMAL_KHR, a present mode changed) they are prepared, with no frame passing
    // through meanwhile; at another size (a resize) they are reconfigured to it.
    if (replaced && generation_possible && !replaced->on_worker() &&
        replaced->format() == info.imageFormat) {
        const bool same_size = replaced->extent().width == info.imageExtent.width &&
                               replaced->extent().height == info.imageExtent.height;
        swapchain_record.kept_tasks = replaced->take_tasks();
        log_info(same_size ? std::string("swapchain recreated at the same size: its "
                                         "frame-generation tasks are kept")
                           : "swapchain recreated at " + std::to_string(info.imageExtent.width) +
                                 "x" + std::to_string(info.imageExtent.height) +
                                 ": its frame-generation tasks are kept, reconfigured to it");
    }
    swapchain_record.surface = info.surface;
    swapchain_record.format = info.imageFormat;
    swapchain_record.extent = info.imageExtent;
    swapchain_record.present_mode = info.presentMode;
    swapchain_record.usage = info.imageUsage;
    swapchain_record.transfer_src_added = transfer_src_added;
    swapchain_record.rgba8_readable = rgba8_readable;
    swapchain_record.rgba8_writable = rgba8_writable;
    swapchain_record.generation_possible = generation_possible;
    record->add_swapchain(*swapchain, std::move(swapchain_record));
    if (generation_possible) {
        // The runtime lives while the device has a swapchain that may generate frames: a
        // replacement counts before the swapchain it replaces is destroyed.
        const std::lock_guard lock(record->generation_mutex);
        ++record->generating_swapchains;
    }
    record->swapchains_created.fetch_add(1, std::memory_order_relaxed);
    log_info("swapchain created: " + std::to_string(info.imageExtent.width) + "x" +
             std::to_string(info.imageExtent.height) +
             (transfer_src_added ? ", transfer-source usage added" : "") +
             (generation_possible ? ", frames generated" : ""));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroySwapchainKHR(VkDevice device, VkSwapchainKHR swapchain,
                                               const VkAllocationCallbacks* allocator) {
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr || record->dispatch.DestroySwapchainKHR == nullptr) {
        return;
    }
    SwapchainWork work;
    record->with_swapchain(swapchain, [&](SwapchainRecord& r) { work = take_work(r); });
    const bool counted = work.counted;
    // On the worker's display the program's handle names the layer's images alone.
    const bool layer_handle = work.worker != nullptr;
    end_work(*record, std::move(work));
    if (counted) {
        // The runtime goes with the device's last swapchain that may generate frames: here, not
        // at vkDestroyDevice (see DeviceGeneration).
        const std::lock_guard lock(record->generation_mutex);
        if (--record->generating_swapchains == 0) {
            record->generation.reset();
            record->generation_tried = false;
        }
    }
    record->remove_swapchain(swapchain);
    if (!layer_handle) {
        record->dispatch.DestroySwapchainKHR(device, swapchain, allocator);
    }
}

VKAPI_ATTR VkResult VKAPI_CALL GetSwapchainImagesKHR(VkDevice device, VkSwapchainKHR swapchain,
                                                     std::uint32_t* count, VkImage* images) {
    const std::shared_ptr<DeviceRecord> record = registry().find_device(device);
    if (record == nullptr || record->dispatch.GetSwapchainImagesKHR == nullptr) {
        return VK_ERROR_EXTENSION_NOT_PRESENT;
    }
    if (const auto scaled = scaled_of(*record, swapchain)) {
        // The program's images, at its size.
        const auto own = scaled->program_images();
        if (images == nullptr) {
            *count = static_cast<std::uint32_t>(own.size());
            return VK_SUCCESS;
        }
        const auto written = std::min(*count, static_cast<std::uint32_t>(own.size()));
        std::copy_n(own.begin(), written, images);
        *count = written;
        return written < own.size() ? VK_INCOMPLETE : VK_SUCCESS;
    }
    const VkResult result =
        record->dispatch.GetSwapchainImagesKHR(device, swapchain, count, images);
    if (images != nullptr && (result == VK_SUCCESS || result == VK_INCOMPLETE)) {
        record->set_swapchain_images(swapchain, std::vector<VkImage>(images, images + *count));
    }
    return result;
}

// The swapchain's generation, when it has one: its presenter and the program's acquires take
// turns on the swapchain.
std::shared_ptr<SwapchainGeneration> generation_of(VkDevice device, VkSwapchainKHR swapchain,
                                                   std::shared_ptr<DeviceRecord>& record) {
    record = registry().find_device(device);
    std::shared_ptr<SwapchainGeneration> generation;
    if (record != nullptr) {
        record->with_swapchain(swapchain, [&](SwapchainRecord& r) { generation = r.generation; });
    }
    return generation;
}

VKAPI_ATTR VkResult VKAPI_CALL AcquireNextImageKHR(VkDevice device, VkSwapchainKHR swapchain,
                                                   std::uint64_t timeout, VkSemaphore semaphore,
                                                   VkFence fence, std::uint32_t* index) {
    std::shared_ptr<DeviceRecord> record;
    const auto generation = generation_of(device, swapchain, record);
    if (record != nullptr) {
        if (const auto scaled = scaled_of(*record, swapchain)) {
            return scaled->acquire(timeout, semaphore, fence, index);
        }
    }
    if (generation) {
        return generation->acquire(timeout, semaphore, fence, index);
    }
    if (record == nullptr || record->dispatch.AcquireNextImageKHR == nullptr) {
        return VK_ERROR_DEVICE_LOST;
    }
    return record->dispatch.AcquireNextImageKHR(device, swapchain, timeout, semaphore, fence,
                                                index);
}

VKAPI_ATTR VkResult VKAPI_CALL AcquireNextImage2KHR(VkDevice device,
                                                    const VkAcquireNextImageInfoKHR* info,
                                                    std::uint32_t* index) {
    std::shared_ptr<DeviceRecord> record;
    const auto generation = generation_of(device, info->swapchain, record);
    if (record != nullptr) {
        if (const auto scaled = scaled_of(*record, info->swapchain)) {
            return scaled->acquire(info->timeout, info->semaphore, info->fence, index);
        }
    }
    if (generation) {
        // One device of the group: deviceMask has nothing to choose.
        return generation->acquire(info->timeout, info->semaphore, info->fence, index);
    }
    if (record == nullptr || record->dispatch.AcquireNextImage2KHR == nullptr) {
        return VK_ERROR_DEVICE_LOST;
    }
    return record->dispatch.AcquireNextImage2KHR(device, info, index);
}

PFN_vkVoidFunction to_void(auto function) {
    return reinterpret_cast<PFN_vkVoidFunction>(function);
}

// True when the device can blit every format `surface` offers: whichever the program picks, the
// layer can then upscale its images (create_scaled_swapchain). Where one cannot be (10-bit
// formats on lavapipe), the program is told the window's own size, once logged, so that it
// never draws a smaller image than its window that nothing upscales.
bool ask_blits_every_format(const InstanceRecord& instance, VkPhysicalDevice physical,
                            VkSurfaceKHR surface) {
    const InstanceDispatch& vk = instance.dispatch;
    if (vk.GetPhysicalDeviceSurfaceFormatsKHR == nullptr ||
        vk.GetPhysicalDeviceFormatProperties == nullptr) {
        return false;
    }
    std::uint32_t count = 0;
    std::vector<VkSurfaceFormatKHR> formats;
    VkResult listed = VK_INCOMPLETE;
    while (listed == VK_INCOMPLETE) {
        if (vk.GetPhysicalDeviceSurfaceFormatsKHR(physical, surface, &count, nullptr) !=
            VK_SUCCESS) {
            return false;
        }
        formats.resize(count);
        listed = vk.GetPhysicalDeviceSurfaceFormatsKHR(physical, surface, &count, formats.data());
    }
    if (listed != VK_SUCCESS) {
        return false;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
        if (!blits(optimal_features(vk, physical, formats[i].format))) {
            static std::once_flag logged;
            std::call_once(logged, [&] {
                log_problem("not scaled: the window offers a format (" +
                            std::to_string(formats[i].format) +
                            ") the device cannot blit, so the program is told the window's size");
            });
            return false;
        }
    }
    return true;
}

// The same, asked once per surface (InstanceRecord::known_blits).
bool blits_every_format(const InstanceRecord& instance, VkPhysicalDevice physical,
                        VkSurfaceKHR surface) {
    if (const std::optional<bool> known = instance.known_blits(physical, surface)) {
        return *known;
    }
    const bool blits = ask_blits_every_format(instance, physical, surface);
    instance.note_blits(physical, surface, blits);
    return blits;
}

// Scaling: the program is told its surface is the window's size times the scale, where a device
// of its on this GPU took Tandem's additions (there the layer can stand in for its swapchains)
// and every format of the surface can be upscaled, so that it asks for a swapchain of that size.
void scale_capabilities(const InstanceRecord& instance, VkPhysicalDevice physical,
                        VkSurfaceKHR surface, VkSurfaceCapabilitiesKHR& capabilities) {
    const LayerSettings& settings = layer_settings();
    if (!settings.scales() || !registry().scales_on(physical) ||
        !blits_every_format(instance, physical, surface)) {
        return;
    }
    if (capabilities.currentExtent.width != UINT32_MAX) {
        capabilities.currentExtent = scaled_extent(capabilities.currentExtent, settings.scale);
    }
    capabilities.minImageExtent = scaled_extent(capabilities.minImageExtent, settings.scale);
    capabilities.maxImageExtent = scaled_extent(capabilities.maxImageExtent, settings.scale);
}

VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceSurfaceCapabilitiesKHR(
    VkPhysicalDevice physical, VkSurfaceKHR surface, VkSurfaceCapabilitiesKHR* capabilities) {
    const std::shared_ptr<InstanceRecord> instance = registry().find_instance(physical);
    if (instance == nullptr ||
        instance->dispatch.GetPhysicalDeviceSurfaceCapabilitiesKHR == nullptr) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const VkResult result =
        instance->dispatch.GetPhysicalDeviceSurfaceCapabilitiesKHR(physical, surface, capabilities);
    if (result == VK_SUCCESS) {
        scale_capabilities(*instance, physical, surface, *capabilities);
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceSurfaceCapabilities2KHR(
    VkPhysicalDevice physical, const VkPhysicalDeviceSurfaceInfo2KHR* surface,
    VkSurfaceCapabilities2KHR* capabilities) {
    const std::shared_ptr<InstanceRecord> instance = registry().find_instance(physical);
    if (instance == nullptr ||
        instance->dispatch.GetPhysicalDeviceSurfaceCapabilities2KHR == nullptr) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const VkResult result = instance->dispatch.GetPhysicalDeviceSurfaceCapabilities2KHR(
        physical, surface, capabilities);
    if (result == VK_SUCCESS) {
        scale_capabilities(*instance, physical, surface->surface,
                           capabilities->surfaceCapabilities);
    }
    return result;
}

// A surface destroyed while swapchains of it live (the specification requires destroying them
// first): the layer's work on them ends now, its queued presents first, as it would at their
// vkDestroySwapchainKHR, for none may be presented once the surface has gone.
VKAPI_ATTR void VKAPI_CALL DestroySurfaceKHR(VkInstance instance, VkSurfaceKHR surface,
                                             const VkAllocationCallbacks* allocator) {
    const std::shared_ptr<InstanceRecord> record = registry().find_instance(instance);
    if (record == nullptr || record->dispatch.DestroySurfaceKHR == nullptr) {
        return;
    }
    if (surface != VK_NULL_HANDLE) {
        for (const std::shared_ptr<DeviceRecord>& device : registry().devices()) {
            if (end_swapchains(
                    *device, [&](const SwapchainRecord& r) { return r.surface == surface; }) > 0) {
                log_problem("vkDestroySurfaceKHR with a swapchain of it still alive: its frame "
                            "generation ends");
            }
        }
    }
    record->forget_surface(surface); // a later surface may have its handle
    record->dispatch.DestroySurfaceKHR(instance, surface, allocator);
}

// The instance-level functions the layer intercepts beyond creation and destruction.
PFN_vkVoidFunction instance_interception(std::string_view name) {
    if (name == "vkDestroySurfaceKHR") {
        return to_void(&DestroySurfaceKHR);
    }
    if (name == "vkGetPhysicalDeviceSurfaceCapabilitiesKHR") {
        return to_void(&GetPhysicalDeviceSurfaceCapabilitiesKHR);
    }
    if (name == "vkGetPhysicalDeviceSurfaceCapabilities2KHR") {
        return to_void(&GetPhysicalDeviceSurfaceCapabilities2KHR);
    }
    return nullptr;
}

// The device-level functions the layer intercepts, by name; nullptr for any other.
PFN_vkVoidFunction device_interception(std::string_view name) {
    struct Entry {
        std::string_view name;
        PFN_vkVoidFunction function;
    };
    static const Entry entries[] = {
        {"vkDestroyDevice", to_void(&DestroyDevice)},
        {"vkGetDeviceQueue", to_void(&GetDeviceQueue)},
        {"vkGetDeviceQueue2", to_void(&GetDeviceQueue2)},
        {"vkQueueSubmit", to_void(&QueueSubmit)},
        {"vkQueueSubmit2", to_void(&QueueSubmit2)},
        {"vkQueueSubmit2KHR", to_void(&QueueSubmit2KHR)},
        {"vkQueueWaitIdle", to_void(&QueueWaitIdle)},
        {"vkQueueBindSparse", to_void(&QueueBindSparse)},
        {"vkDeviceWaitIdle", to_void(&DeviceWaitIdle)},
        {"vkQueuePresentKHR", to_void(&QueuePresentKHR)},
        {"vkCreateSwapchainKHR", to_void(&CreateSwapchainKHR)},
        {"vkDestroySwapchainKHR", to_void(&DestroySwapchainKHR)},
        {"vkGetSwapchainImagesKHR", to_void(&GetSwapchainImagesKHR)},
        {"vkAcquireNextImageKHR", to_void(&AcquireNextImageKHR)},
        {"vkAcquireNextImage2KHR", to_void(&AcquireNextImage2KHR)},
    };
    for (const Entry& entry : entries) {
        if (entry.name == name) {
            return entry.function;
        }
    }
    return nullptr;
}

PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name);

// An intercepted device function is offered only where the next layer offers it, so that asking
// for an extension's function the device did not enable still answers nullptr.
PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name) {
    if (name == nullptr) {
        return nullptr;
    }
    if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) {
        return to_void(&GetDeviceProcAddr);
    }
    const std::shared_ptr<DeviceRecord> record =
        device != VK_NULL_HANDLE ? registry().find_device(device) : nullptr;
    if (record == nullptr) {
        return nullptr;
    }
    const PFN_vkVoidFunction next = record->dispatch.GetDeviceProcAddr(device, name);
    if (next == nullptr) {
        return nullptr;
    }
    const PFN_vkVoidFunction own = device_interception(name);
    return own != nullptr ? own : next;
}

PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* name) {
    if (name == nullptr) {
        return nullptr;
    }
    const std::string_view function(name);
    if (function == "vkGetInstanceProcAddr") {
        return to_void(&GetInstanceProcAddr);
    }
    if (function == "vkCreateInstance") {
        return to_void(&CreateInstance);
    }
    if (function == "vkGetDeviceProcAddr") {
        return to_void(&GetDeviceProcAddr);
    }
    const std::shared_ptr<InstanceRecord> record =
        instance != VK_NULL_HANDLE ? registry().find_instance(instance) : nullptr;
    if (record == nullptr) {
        return nullptr;
    }
    if (function == "vkDestroyInstance") {
        return to_void(&DestroyInstance);
    }
    if (function == "vkCreateDevice") {
        return to_void(&CreateDevice);
    }
    const PFN_vkVoidFunction next = record->dispatch.GetInstanceProcAddr(instance, name);
    if (next == nullptr) {
        return nullptr;
    }
    PFN_vkVoidFunction own = device_interception(function);
    if (own == nullptr) {
        own = instance_interception(function);
    }
    return own != nullptr ? own : next;
}

} // namespace
} // namespace tandem::layer

// The exported names are the loader's own (libvulkan exports them too): inside this library a
// reference to them could bind to libvulkan's, so everything here hands out the internal
// functions above and the exports only forward to them.
extern "C" {

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
                                                                             const char* name) {
    return tandem::layer::GetDeviceProcAddr(device, name);
}

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                                               const char* name) {
    return tandem::layer::GetInstanceProcAddr(instance, name);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* interface) {
    if (interface == nullptr || interface->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    // Version 2 is the one whose GetInstanceProcAddr / GetDeviceProcAddr the loader takes from
    // here; a loader that asks for less cannot load this layer.
    if (interface->loaderLayerInterfaceVersion < 2) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    interface->loaderLayerInterfaceVersion = 2;
    interface->pfnGetInstanceProcAddr = &tandem::layer::GetInstanceProcAddr;
    interface->pfnGetDeviceProcAddr = &tandem::layer::GetDeviceProcAddr;
    interface->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

} // extern "C"
