#include "sync/timeline_semaphore.hpp"

#include <algorithm>
#include <thread>

#include <unistd.h>

#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

Handle<VkSemaphore> make_timeline(const Device& device, const std::string& name,
                                  std::uint64_t initial, bool exportable) {
    VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = initial;
    if (exportable) {
        type.pNext = &export_info;
    }
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    const VkDevice dev = device.handle();
    vk_check(vkCreateSemaphore(dev, &info, nullptr, &semaphore), "vkCreateSemaphore " + name);
    device.name(semaphore, VK_OBJECT_TYPE_SEMAPHORE, name);
    return Handle<VkSemaphore>(semaphore,
                               [dev](VkSemaphore s) { vkDestroySemaphore(dev, s, nullptr); });
}

} // namespace

TimelineSemaphore::TimelineSemaphore(const Device& device, const std::string& name,
                                     std::uint64_t initial, bool exportable)
    : m_device(&device), m_name(name) {
    if (exportable && (!device.info().features.external_semaphore_fd_timeline ||
                       device.fn().get_semaphore_fd == nullptr)) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "Timeline semaphore " + name + " cannot be exported from " + device.info().name,
                    "The device lacks opaque-fd timeline semaphore export; Tandem bridges "
                    "synchronisation on the host for such pairs");
    }
    m_semaphore = make_timeline(device, name, initial, exportable);
}

TimelineSemaphore TimelineSemaphore::import_from(const Device& device,
                                                 const TimelineSemaphore& source,
                                                 const std::string& name) {
    const auto& a = device.info();
    const auto& b = source.device().info();
    if (!a.features.external_semaphore_fd_timeline || device.fn().import_semaphore_fd == nullptr ||
        source.device().fn().get_semaphore_fd == nullptr) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "Cannot share timeline semaphore " + source.name() + " with " + a.name,
                    "Opaque-fd timeline semaphores are not supported on both devices; use the "
                    "host bridge");
    }
    if (a.device_uuid != b.device_uuid || a.driver_uuid != b.driver_uuid) {
        throw Error(VK_ERROR_INVALID_EXTERNAL_HANDLE,
                    "Cannot share timeline semaphore " + source.name() + " between " + b.name +
                        " and " + a.name,
                    "Opaque fds need equal device and driver UUIDs; use the host bridge");
    }
    const int fd = source.export_fd();

    TimelineSemaphore out;
    out.m_device = &device;
    out.m_name = name;
    out.m_semaphore = make_timeline(device, name, 0, false);
    VkImportSemaphoreFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR};
    import.semaphore = out.handle();
    import.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    import.fd = fd;
    const VkResult result = device.fn().import_semaphore_fd(device.handle(), &import);
    if (result != VK_SUCCESS) {
        ::close(fd); // a successful import takes ownership of the fd; a failed one does not
    }
    vk_check(result, "vkImportSemaphoreFdKHR " + name);
    return out;
}

int TimelineSemaphore::export_fd() const {
    if (m_device->fn().get_semaphore_fd == nullptr) {
        throw Error(VK_ERROR_EXTENSION_NOT_PRESENT,
                    "Timeline semaphore " + m_name + " cannot be exported",
                    "The device lacks VK_KHR_external_semaphore_fd");
    }
    VkSemaphoreGetFdInfoKHR get{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    get.semaphore = handle();
    get.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    vk_check(m_device->fn().get_semaphore_fd(m_device->handle(), &get, &fd),
             "vkGetSemaphoreFdKHR " + m_name);
    return fd;
}

VkResult TimelineSemaphore::value(std::uint64_t& out) const noexcept {
    const auto lock = m_device->host_semaphore_guard();
    return vk_status(vkGetSemaphoreCounterValue(m_device->handle(), handle(), &out),
                     "vkGetSemaphoreCounterValue");
}

VkResult TimelineSemaphore::signal(std::uint64_t new_value) noexcept {
    const auto lock = m_device->host_semaphore_guard();
    std::uint64_t current = 0;
    if (VkResult r = vk_status(vkGetSemaphoreCounterValue(m_device->handle(), handle(), &current),
                               "vkGetSemaphoreCounterValue");
        r != VK_SUCCESS) {
        return r;
    }
    if (new_value <= current) {
        // Values only grow: signalling backwards is a bug in the caller, never done.
        return VK_ERROR_UNKNOWN;
    }
    VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    info.semaphore = handle();
    info.value = new_value;
    return vk_status(vkSignalSemaphore(m_device->handle(), &info), "vkSignalSemaphore");
}

VkResult TimelineSemaphore::wait(std::uint64_t target,
                                 std::chrono::nanoseconds timeout) const noexcept {
    // Polls the counter rather than blocking in vkWaitSemaphores; see the header.
    const auto start = std::chrono::steady_clock::now();
    auto sleep = std::chrono::microseconds(10);
    for (;;) {
        std::uint64_t current = 0;
        if (VkResult r = value(current); r != VK_SUCCESS) {
            return r;
        }
        if (current >= target) {
            return VK_SUCCESS;
        }
        const auto elapsed = std::chrono::steady_clock::now() - start;
        if (elapsed >= timeout) {
            return VK_TIMEOUT;
        }
        if (elapsed < std::chrono::microseconds(50)) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(sleep);
            sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
        }
    }
}

VkSemaphoreSubmitInfo TimelineSemaphore::submit_info(std::uint64_t target,
                                                     VkPipelineStageFlags2 stage) const noexcept {
    return semaphore_submit_info(handle(), target, stage);
}

VkSemaphoreSubmitInfo semaphore_submit_info(VkSemaphore semaphore, std::uint64_t value,
                                            VkPipelineStageFlags2 stage) noexcept {
    VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    info.semaphore = semaphore;
    info.value = value;
    info.stageMask = stage;
    return info;
}

VkResult wait_timeline(const Device& device, VkSemaphore semaphore, std::uint64_t value,
                       std::chrono::nanoseconds timeout, const char* context) noexcept {
    if (value == 0) {
        return VK_SUCCESS;
    }
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &semaphore;
    info.pValues = &value;
    const auto ns = timeout.count() < 0 ? 0 : static_cast<std::uint64_t>(timeout.count());
    return vk_status(vkWaitSemaphores(device.handle(), &info, ns), context);
}

} // namespace tandem::detail
