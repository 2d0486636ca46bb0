#include "core/vk_check.hpp"

#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tandem/error.hpp"

namespace tandem {

namespace {
std::string compose(VkResult result, const std::string& context, const std::string& hint) {
    std::string text = context;
    if (result != VK_SUCCESS) {
        text += " (";
        text += to_string(result);
        text += ")";
    }
    if (!hint.empty()) {
        text += ". ";
        text += hint;
    }
    return text;
}
} // namespace

Error::Error(VkResult result, std::string what_was_done, std::string what_to_do)
    : Error(category_of(result), result, std::move(what_was_done), std::move(what_to_do)) {}

Error::Error(ErrorCategory category, VkResult result, std::string what_was_done,
             std::string what_to_do)
    : std::runtime_error(compose(result, what_was_done, what_to_do)), m_category(category),
      m_result(result), m_context(std::move(what_was_done)), m_hint(std::move(what_to_do)) {}

ErrorCategory category_of(VkResult result) noexcept {
    switch (result) {
    case VK_SUCCESS:
        return ErrorCategory::Other;
    case VK_ERROR_DEVICE_LOST:
        return ErrorCategory::DeviceLost;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        return ErrorCategory::OutOfMemory;
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return ErrorCategory::Unsupported;
    default:
        return ErrorCategory::Vulkan;
    }
}

const char* to_string(ErrorCategory category) noexcept {
    switch (category) {
    case ErrorCategory::Other:
        return "other";
    case ErrorCategory::InvalidArgument:
        return "invalid argument";
    case ErrorCategory::Unsupported:
        return "unsupported";
    case ErrorCategory::OutOfMemory:
        return "out of memory";
    case ErrorCategory::DeviceLost:
        return "device lost";
    case ErrorCategory::Vulkan:
        return "vulkan";
    }
    return "?";
}

const char* to_string(VkResult result) noexcept {
    switch (result) {
#define TANDEM_CASE(x)                                                                             \
    case x:                                                                                        \
        return #x;
        TANDEM_CASE(VK_SUCCESS)
        TANDEM_CASE(VK_NOT_READY)
        TANDEM_CASE(VK_TIMEOUT)
        TANDEM_CASE(VK_EVENT_SET)
        TANDEM_CASE(VK_EVENT_RESET)
        TANDEM_CASE(VK_INCOMPLETE)
        TANDEM_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
        TANDEM_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        TANDEM_CASE(VK_ERROR_INITIALIZATION_FAILED)
        TANDEM_CASE(VK_ERROR_DEVICE_LOST)
        TANDEM_CASE(VK_ERROR_MEMORY_MAP_FAILED)
        TANDEM_CASE(VK_ERROR_LAYER_NOT_PRESENT)
        TANDEM_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
        TANDEM_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
        TANDEM_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
        TANDEM_CASE(VK_ERROR_TOO_MANY_OBJECTS)
        TANDEM_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
        TANDEM_CASE(VK_ERROR_FRAGMENTED_POOL)
        TANDEM_CASE(VK_ERROR_UNKNOWN)
        TANDEM_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
        TANDEM_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        TANDEM_CASE(VK_ERROR_FRAGMENTATION)
        TANDEM_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
        TANDEM_CASE(VK_PIPELINE_COMPILE_REQUIRED)
        TANDEM_CASE(VK_ERROR_NOT_PERMITTED_KHR)
#undef TANDEM_CASE
    default:
        return "VK_RESULT_UNKNOWN";
    }
}

namespace detail {

namespace {
struct Fault {
    std::string match;
    VkResult result;
    int remaining;
    int pass = 0; // matching calls that still report what the driver returned
};
std::mutex g_fault_mutex;
std::vector<Fault> g_faults;
// Cheap check on the hot path: only take the lock when a fault has been injected.
// Relaxed is enough: a test injects before it starts the work that should fail.
std::atomic<bool> g_any_fault{false};

const char* generic_hint(VkResult result) {
    switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "Use a smaller resolution or fewer slots, or close other GPU programs";
    case VK_ERROR_DEVICE_LOST:
        return "The GPU driver reset the device; check the kernel log (dmesg) and retry";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "Install a Vulkan 1.3 driver (mesa-vulkan-drivers provides lavapipe)";
    case VK_ERROR_LAYER_NOT_PRESENT:
        return "Install vulkan-validationlayers or run with TANDEM_VALIDATION=0";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "This device lacks something Tandem needs; `tandem devices` shows what it has";
    default:
        return "";
    }
}
} // namespace

void inject_vk_fault(std::string_view match, VkResult result, int count) {
    std::lock_guard lock(g_fault_mutex);
    g_faults.push_back({std::string(match), result, count});
    g_any_fault.store(true, std::memory_order_relaxed);
}

namespace {

// TANDEM_FAULT_WORKER_LOST, read once: how many worker submissions pass, or what is wrong with
// the text.
struct EnvFault {
    std::optional<int> pass;
    std::string problem;
};

const EnvFault& env_fault() {
    static const EnvFault parsed = [] {
        EnvFault out;
        const char* text = std::getenv("TANDEM_FAULT_WORKER_LOST");
        if (text == nullptr || *text == '\0') {
            return out;
        }
        char* end = nullptr;
        const long pass = std::strtol(text, &end, 10);
        if (*end != '\0' || pass < 0 || pass > std::numeric_limits<int>::max()) {
            out.problem = std::string("TANDEM_FAULT_WORKER_LOST='") + text +
                          "' is not a number of job submissions";
        } else {
            out.pass = static_cast<int>(pass);
        }
        return out;
    }();
    return parsed;
}

} // namespace

void inject_vk_faults_from_env() {
    const EnvFault& fault = env_fault();
    if (!fault.problem.empty()) {
        throw Error(ErrorCategory::InvalidArgument, fault.problem,
                    "Give a whole number N >= 0 (worker submissions after the first N fail as "
                    "lost), or unset it");
    }
    static std::once_flag once;
    if (fault.pass) {
        std::call_once(once, [&] {
            std::lock_guard lock(g_fault_mutex);
            g_faults.push_back({"worker submit", VK_ERROR_DEVICE_LOST,
                                std::numeric_limits<int>::max(), *fault.pass});
            g_any_fault.store(true, std::memory_order_relaxed);
        });
    }
}

void clear_vk_faults() {
    std::lock_guard lock(g_fault_mutex);
    g_faults.clear();
    g_any_fault.store(false, std::memory_order_relaxed);
}

VkResult vk_status(VkResult result, std::string_view context) noexcept {
    if (!g_any_fault.load(std::memory_order_relaxed)) {
        return result;
    }
    std::lock_guard lock(g_fault_mutex);
    for (auto& fault : g_faults) {
        if (fault.remaining > 0 && context.find(fault.match) != std::string_view::npos) {
            if (fault.pass > 0) {
                --fault.pass;
                return result;
            }
            --fault.remaining;
            return fault.result;
        }
    }
    return result;
}

void vk_check(VkResult result, std::string_view context, std::string_view hint) {
    result = vk_status(result, context);
    if (result == VK_SUCCESS) {
        return;
    }
    std::string h(hint.empty() ? std::string_view(generic_hint(result)) : hint);
    throw Error(result, std::string(context) + " failed", std::move(h));
}

} // namespace detail
} // namespace tandem
