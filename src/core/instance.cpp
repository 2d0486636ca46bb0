#include "core/instance.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/cpu.hpp"
#include "core/log.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {
constexpr const char* k_validation_layer = "VK_LAYER_KHRONOS_validation";
std::mutex g_last_message_mutex;

bool has_layer(const char* name) {
    std::uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    for (const auto& layer : layers) {
        if (std::strcmp(layer.layerName, name) == 0) {
            return true;
        }
    }
    return false;
}

bool has_instance_extension(const char* name) {
    std::uint32_t count = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vkEnumerateInstanceExtensionProperties(nullptr, &count, extensions.data());
    for (const auto& extension : extensions) {
        if (std::strcmp(extension.extensionName, name) == 0) {
            return true;
        }
    }
    return false;
}
// Indices into Instance::m_counts, in MessageCounts' order.
enum CountIndex : std::size_t {
    k_general,
    k_validation,
    k_performance,
    k_verbose,
    k_info,
    k_warning,
    k_error,
    k_known_false_positives,
};
} // namespace

bool is_known_false_positive(const VkDebugUtilsMessengerCallbackDataEXT* data) {
    if (data == nullptr || data->pMessageIdName == nullptr ||
        std::strcmp(data->pMessageIdName, k_host_signal_false_positive_vuid) != 0 ||
        data->objectCount == 0) {
        return false;
    }
    for (std::uint32_t i = 0; i < data->objectCount; ++i) {
        const auto& object = data->pObjects[i];
        const std::string_view name = object.pObjectName != nullptr ? object.pObjectName : "";
        if (object.objectType != VK_OBJECT_TYPE_SEMAPHORE ||
            !name.ends_with(k_host_signalled_only)) {
            return false;
        }
    }
    return true;
}

const char* to_string(Validation validation) noexcept {
    switch (validation) {
    case Validation::Off:
        return "off";
    case Validation::Core:
        return "core";
    case Validation::Sync:
        return "sync";
    }
    return "?";
}

std::optional<Validation> parse_validation(std::string_view text) noexcept {
    if (text == "0" || text == "off") {
        return Validation::Off;
    }
    if (text == "1" || text == "on" || text == "core") {
        return Validation::Core;
    }
    if (text == "sync" || text == "2") {
        return Validation::Sync;
    }
    return std::nullopt;
}

Validation validation_from_env(Validation fallback) {
    const char* value = std::getenv("TANDEM_VALIDATION");
    if (value == nullptr || *value == '\0') {
        return fallback;
    }
    auto parsed = parse_validation(value);
    if (!parsed) {
        throw Error(ErrorCategory::InvalidArgument,
                    "TANDEM_VALIDATION='" + std::string(value) + "' is not understood",
                    "Use 0 (off), 1 (core validation) or sync (core plus synchronisation)");
    }
    return *parsed;
}

Instance::Instance(const InstanceOptions& options)
    : m_validation(options.validation), m_fail_severity(options.fail_severity) {
    std::uint32_t loader_version = 0;
    if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS ||
        loader_version < VK_API_VERSION_1_3) {
        throw Error(VK_ERROR_INCOMPATIBLE_DRIVER, "The Vulkan loader does not offer Vulkan 1.3",
                    "Install libvulkan1 1.3 or newer");
    }

    std::vector<const char*> layers;
    std::vector<const char*> extensions;
    if (m_validation != Validation::Off) {
        if (!has_layer(k_validation_layer)) {
            throw Error(VK_ERROR_LAYER_NOT_PRESENT,
                        "Validation was requested but VK_LAYER_KHRONOS_validation is not installed",
                        "Install vulkan-validationlayers, or set TANDEM_VALIDATION=0");
        }
        layers.push_back(k_validation_layer);
    }
    m_debug_utils = has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (m_debug_utils) {
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }

    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = options.application_name.c_str();
    app.pEngineName = "tandem";
    app.engineVersion = VK_MAKE_API_VERSION(0, 0, 1, 0);
    app.apiVersion = VK_API_VERSION_1_3;

    const VkValidationFeatureEnableEXT sync_enable =
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync_enable;

    VkDebugUtilsMessengerCreateInfoEXT messenger{
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = &Instance::on_message;
    messenger.pUserData = this;

    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    info.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    // Chain the messenger so instance creation itself is covered too.
    const void* chain = nullptr;
    if (m_debug_utils) {
        messenger.pNext = chain;
        chain = &messenger;
    }
    if (m_validation == Validation::Sync) {
        features.pNext = chain;
        chain = &features;
    }
    info.pNext = chain;

    VkResult result = vkCreateInstance(&info, nullptr, &m_instance);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
        throw Error(result, "No Vulkan driver was found",
                    "Install mesa-vulkan-drivers (lavapipe) or your GPU's Vulkan driver");
    }
    vk_check(result, "vkCreateInstance");

    if (m_debug_utils) {
        auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(m_instance, "vkCreateDebugUtilsMessengerEXT"));
        messenger.pNext = nullptr;
        if (create != nullptr) {
            vk_check(create(m_instance, &messenger, nullptr, &m_messenger),
                     "vkCreateDebugUtilsMessengerEXT");
        }
    }
    log_debug("device", "Vulkan instance created (validation: {})", to_string(m_validation));
}

Instance::Instance(VkInstance external, bool debug_utils)
    : m_instance(external), m_fail_severity(VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT),
      m_debug_utils(debug_utils), m_owned(false) {
    if (external == VK_NULL_HANDLE) {
        throw Error(ErrorCategory::InvalidArgument, "The application's VkInstance is null",
                    "Create the instance before handing it to Tandem");
    }
}

Instance::~Instance() {
    if (!m_owned) {
        return;
    }
    if (m_messenger != VK_NULL_HANDLE) {
        auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(m_instance, "vkDestroyDebugUtilsMessengerEXT"));
        if (destroy != nullptr) {
            destroy(m_instance, m_messenger, nullptr);
        }
    }
    if (m_instance != VK_NULL_HANDLE) {
        vkDestroyInstance(m_instance, nullptr);
    }
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
    std::uint32_t count = 0;
    vk_check(vkEnumeratePhysicalDevices(m_instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    if (count == 0) {
        // No driver offers a device: Unsupported, as discovery's empty list is; the result
        // stays in the text users and scripts already know.
        throw Error(ErrorCategory::Unsupported, VK_ERROR_INITIALIZATION_FAILED,
                    "No Vulkan device was found",
                    "Install mesa-vulkan-drivers (lavapipe) or your GPU's Vulkan driver, and check "
                    "VK_DRIVER_FILES / VK_ICD_FILENAMES if set");
    }
    std::vector<VkPhysicalDevice> devices(count);
    vk_check(vkEnumeratePhysicalDevices(m_instance, &count, devices.data()),
             "vkEnumeratePhysicalDevices");
    devices.resize(count);
    return devices;
}

std::string Instance::last_validation_message() const {
    std::lock_guard lock(g_last_message_mutex);
    return m_last_message;
}

MessageCounts Instance::message_counts() const noexcept {
    // Relaxed: each counter is a statistic of its own; no other memory is published through it.
    const auto at = [&](CountIndex i) { return m_counts[i].load(std::memory_order_relaxed); };
    return {at(k_general), at(k_validation), at(k_performance), at(k_verbose),
            at(k_info),    at(k_warning),    at(k_error),       at(k_known_false_positives)};
}

void Instance::reset_validation_messages() noexcept {
    m_messages.store(0, std::memory_order_relaxed);
    for (auto& count : m_counts) {
        count.store(0, std::memory_order_relaxed);
    }
}

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* self = static_cast<Instance*>(user);
    const char* text = data != nullptr && data->pMessage != nullptr ? data->pMessage : "";
    // A log message has no trailing newline (the loader's messages end with one).
    std::string_view line = text;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
        line.remove_suffix(1);
    }
    const auto count = [&](CountIndex i) {
        self->m_counts[i].fetch_add(1, std::memory_order_relaxed);
    };
    if ((types & VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT) != 0) {
        count(k_general);
    }
    if ((types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT) != 0) {
        count(k_validation);
    }
    if ((types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) != 0) {
        count(k_performance);
    }
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        count(k_error);
    } else if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        count(k_warning);
    } else if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT) {
        count(k_info);
    } else {
        count(k_verbose);
    }
    // The thread that made the Vulkan call runs this, so its logger (a Runtime's, on the
    // Runtime's calls and threads) receives the message.
    if (is_known_false_positive(data)) {
        count(k_known_false_positives);
        log_debug("validation", "known false positive, not counted: {}", line);
        return VK_FALSE;
    }
    const bool counted = (types & VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT) == 0 &&
                         severity >= self->m_fail_severity;
    if (counted) {
        self->m_messages.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(g_last_message_mutex);
        self->m_last_message = text;
    }
    // General messages come from the loader and drivers; validation and performance ones from
    // the validation layer.
    const bool general = (types & VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT) != 0 &&
                         (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)) == 0;
    LogLevel level = LogLevel::Debug;
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        level = LogLevel::Error;
    } else if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        level = LogLevel::Warn;
    }
    if (general) {
        log_at(level, "device", "vulkan: {}", line);
    } else {
        log_at(level, "validation", "{}", line);
    }
    return VK_FALSE;
}

} // namespace tandem::detail
