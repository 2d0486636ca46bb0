// Instance: the VkInstance Tandem works in, with the Khronos validation layer (and optionally
// synchronisation validation) and a debug-utils messenger that logs each message to the calling
// thread's logger (core/log.hpp: category "validation", or "device" for the loader's and
// drivers' general messages) and counts every message by type and severity. Create one per
// process and keep it alive longer than every Device made from it. Thread-safe after
// construction; the counters are atomics.
#pragma once

#include <array>
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
// its debug name: the band gates (transfer/bridge_signal_hand_off.hpp, stream_hand_off.cpp).
// The validation layer of Debian 12 (1.3.239) records a host signal that releases several of a
// queue's pending waits at once (the gate raised to a transfer's last band) as a signal still
// pending, and reports the next host signal of that semaphore as VUID-VkSemaphoreSignalInfo-
// value-03259 ("value must be less than the value of any pending semaphore signal operations"),
// though a host signal has happened when vkSignalSemaphore returns. The layer's semaphore
// tracking rework (KhronosGroup/Vulkan-ValidationLayers pull request 8519) fixed it. The
// messenger logs that message for these semaphores at debug level and does not count it;
// test_validation.cpp makes it and checks that every other message is counted.
inline constexpr std::string_view k_host_signalled_only = " (host-signalled only)";
inline constexpr const char* k_host_signal_false_positive_vuid =
    "VUID-VkSemaphoreSignalInfo-value-03259";

// True for exactly the message k_host_signalled_only describes: that VUID, naming only
// semaphores whose debug names end with the suffix. Every other message is counted.
[[nodiscard]] bool is_known_false_positive(const VkDebugUtilsMessengerCallbackDataEXT* data);

// Every message the messenger received since creation (or the last reset), by type and by
// severity: one of two types counts under each. `known_false_positives` were logged, not
// counted as failures (is_known_false_positive); they are in the type and severity counts too.
struct MessageCounts {
    std::uint64_t general = 0;
    std::uint64_t validation = 0;
    std::uint64_t performance = 0;
    std::uint64_t verbose = 0;
    std::uint64_t info = 0;
    std::uint64_t warning = 0;
    std::uint64_t error = 0;
    std::uint64_t known_false_positives = 0;
};

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
    // A snapshot of the counters (each read on its own: messages arriving meanwhile may be in
    // some counts and not yet in others).
    [[nodiscard]] MessageCounts message_counts() const noexcept;
    void reset_validation_messages() noexcept;

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
    // MessageCounts' fields, in its order.
    std::array<std::atomic<std::uint64_t>, 8> m_counts{};
};

} // namespace tandem::detail
