#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/log.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

// The fixture's promise rests on this: a real validation error is seen and counted.
TEST(Validation, CountsARealValidationError) {
    if (detail::validation_from_env(detail::Validation::Sync) == detail::Validation::Off) {
        GTEST_SKIP() << "validation is off (TANDEM_VALIDATION=0)";
    }
    detail::InstanceOptions options;
    options.validation = detail::Validation::Core;
    detail::Instance instance(options);
    auto adapters = detail::discover_adapters(instance, 1);
    detail::Device device(instance, adapters.front());
    EXPECT_EQ(instance.validation_messages(), 0u);

    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = 0; // VUID-VkBufferCreateInfo-size-00912
    info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    if (vkCreateBuffer(device.handle(), &info, nullptr, &buffer) == VK_SUCCESS) {
        vkDestroyBuffer(device.handle(), buffer, nullptr);
    }
    EXPECT_GE(instance.validation_messages(), 1u);
    EXPECT_NE(instance.last_validation_message().find("size"), std::string::npos);
}

// A validation message goes to the logger of the thread whose Vulkan call caused it (a Runtime's,
// on its calls and threads), category "validation", and is still counted.
// The validation layer's label bookkeeping before 1.3.243 is not thread-safe (command buffers
// freed on one thread while another records a label crash it): detected through the device's
// own entry point, so labels stay wherever that layer is not in the way.
TEST(Validation, LabelsAreLeftOutOnlyUnderAValidationLayerThatRacesOnThem) {
    std::uint32_t installed = 0; // the Khronos layer's version, 0 when absent
    std::uint32_t count = 0;
    ASSERT_EQ(vkEnumerateInstanceLayerProperties(&count, nullptr), VK_SUCCESS);
    std::vector<VkLayerProperties> layers(count);
    ASSERT_EQ(vkEnumerateInstanceLayerProperties(&count, layers.data()), VK_SUCCESS);
    for (const VkLayerProperties& layer : layers) {
        if (std::string(layer.layerName) == "VK_LAYER_KHRONOS_validation") {
            installed = layer.specVersion;
        }
    }
    for (const auto validation : {detail::Validation::Off, detail::Validation::Core}) {
        if (validation != detail::Validation::Off &&
            (installed == 0 ||
             detail::validation_from_env(detail::Validation::Sync) == detail::Validation::Off)) {
            continue; // no layer to detect
        }
        detail::InstanceOptions options;
        options.validation = validation;
        detail::Instance instance(options);
        auto adapters = detail::discover_adapters(instance, 1);
        detail::Device device(instance, adapters.front());
        const bool races =
            validation != detail::Validation::Off && installed < VK_MAKE_API_VERSION(0, 1, 3, 243);
        EXPECT_EQ(detail::validation_layer_races_on_labels(device.handle()), races)
            << "validation " << static_cast<int>(validation) << ", layer "
            << VK_API_VERSION_MINOR(installed) << "." << VK_API_VERSION_PATCH(installed);
    }
}

TEST(Validation, MessagesReachTheCallingThreadsLogger) {
    if (detail::validation_from_env(detail::Validation::Sync) == detail::Validation::Off) {
        GTEST_SKIP() << "validation is off (TANDEM_VALIDATION=0)";
    }
    detail::InstanceOptions options;
    options.validation = detail::Validation::Core;
    detail::Instance instance(options);
    auto adapters = detail::discover_adapters(instance, 1);
    detail::Device device(instance, adapters.front());

    std::mutex mutex;
    std::vector<std::pair<LogLevel, std::string>> validation;
    const auto logger = detail::Logger::create(
        LogLevel::Warn, [&](LogLevel level, std::string_view category, std::string_view text) {
            std::lock_guard lock(mutex);
            if (category == "validation") {
                validation.emplace_back(level, std::string(text));
            }
        });
    {
        const detail::LogScope scope(*logger);
        VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        info.size = 0; // VUID-VkBufferCreateInfo-size-00912
        info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        VkBuffer buffer = VK_NULL_HANDLE;
        if (vkCreateBuffer(device.handle(), &info, nullptr, &buffer) == VK_SUCCESS) {
            vkDestroyBuffer(device.handle(), buffer, nullptr);
        }
    }
    std::lock_guard lock(mutex);
    ASSERT_FALSE(validation.empty());
    EXPECT_EQ(validation.front().first, LogLevel::Error);
    EXPECT_NE(validation.front().second.find("VUID-VkBufferCreateInfo-size-00912"),
              std::string::npos)
        << validation.front().second;
    EXPECT_GE(instance.validation_messages(), 1u);
}

TEST(Validation, EnvironmentValueIsParsed) {
    EXPECT_EQ(detail::parse_validation("0"), detail::Validation::Off);
    EXPECT_EQ(detail::parse_validation("core"), detail::Validation::Core);
    EXPECT_EQ(detail::parse_validation("sync"), detail::Validation::Sync);
    EXPECT_FALSE(detail::parse_validation("loud"));
}

TEST(VkCheck, InjectedFaultsThrowWithContextAndHint) {
    detail::inject_vk_fault("vkTestCall", VK_ERROR_DEVICE_LOST);
    try {
        detail::vk_check(VK_SUCCESS, "vkTestCall on worker");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.result(), VK_ERROR_DEVICE_LOST);
        EXPECT_NE(std::string(e.what()).find("vkTestCall on worker failed (VK_ERROR_DEVICE_LOST)"),
                  std::string::npos);
        EXPECT_FALSE(e.hint().empty());
    }
    // The fault was used up.
    EXPECT_NO_THROW(detail::vk_check(VK_SUCCESS, "vkTestCall on worker"));
    detail::clear_vk_faults();
}

} // namespace
} // namespace tandem::test
