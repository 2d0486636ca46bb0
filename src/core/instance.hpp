// Instance: the VkInstance Tandem works in, with the Khronos validation layer (and optionally
// synchronisation validation) and a debug-utils messenger that logs each message to the calling
// thread's logger (core/log.hpp: category "validation", or "device" for the loader's and
// drivers' general messages) and counts every validation message. Create one per process and
// keep it alive longer than every Device made from it. Thread-safe after construction; the
// counters are atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

namespace tandem::detail {

enum class Validation {
    Off,
    Core, // VK_LAYER_KHRONOS_validation
    Sync, // plus synchronisation validation
};

[[nodiscard]] const char* to_string(Validation validation) noexcept;
// "0"/"off", "1"/"on"/"core", "sync"; nullopt for anything else.
[[nodiscard]] std::optional<Validation> parse_validation(std::string_view text) noexcept;
// The value of TANDEM_VALIDATION, or `fallback` when it is unset. Throws Error on a bad value.
[[nodiscard]] Validation validation_from_env(Validation fallback);

struct InstanceOptions {
    std::string application_name = "tandem";
    Validation validation = Validation::Off;
    // Validation messages at this severity or above are counted as validation failures.
    VkDebugUtilsMessageSeverityFlagBitsEXT fail_severity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
};

// Names a timeline semaphore that only the host ever signals (no queue signals it), suffixed to
// its debug name. The validation layer of Debian 12 (1.3.239) takes a queue's pending wait on
// such a semaphore for a pending signal and reports VUID-VkSemaphoreSignalInfo-value-03259
// ("value must be less than the value of any pending semaphore signal operations") for the
// host signal that releases the wait, which the specification allows; the messenger logs that
// message for these semaphores at debug level and does not count it.
inline constexpr std::string_view k_host_signalled_only = " (host-signalled only)";

class Instance {
public:
    explicit Instance(const InstanceOptions& options);
    // Adopts an application's instance (embedding): nothing is created, the destructor leaves
    // `external` alive, and no validation messages are counted (the application owns its
    // messenger). `debug_utils`: the application enabled VK_EXT_debug_utils.
    Instance(VkInstance external, bool debug_utils);
    ~Instance();
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    [[nodiscard]] VkInstance handle() const noexcept { return m_instance; }
    [[nodiscard]] Validation validation() const noexcept { return m_validation; }
    [[nodiscard]] bool has_debug_utils() const noexcept { return m_debug_utils; }

    // Every physical device the loader reports, in loader order. Throws Error when there is
    // none, with a sentence that says how to install a driver.
    [[nodiscard]] std::vector<VkPhysicalDevice> physical_devices() const;

    // Validation messages at or above the fail severity since creation (or the last reset).
    [[nodiscard]] std::uint64_t validation_messages() const noexcept {
        return m_messages.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::string last_validation_message() const;
    void reset_validation_messages() noexcept { m_messages.store(0, std::memory_order_relaxed); }

private:
    static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(
        VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
        const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

    VkInstance m_instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT m_messenger = VK_NULL_HANDLE;
    Validation m_validation = Validation::Off;
    VkDebugUtilsMessageSeverityFlagBitsEXT m_fail_severity;
    bool m_debug_utils = false;
    bool m_owned = true;
    std::atomic<std::uint64_t> m_messages{0};
    std::string m_last_message;
};

} // namespace tandem::detail
