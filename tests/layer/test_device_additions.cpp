// The queue the layer adds to the program's device for Tandem (DeviceAdditions::add_spare_queues,
// TANDEM_FRAMEGEN_QUEUE=own), on a physical device described by functions of the test's own in
// place of the next layer's: one more queue in each graphics+compute family the program asks
// queues of where the family has one to spare and the program's entry has no flags, at the
// program's first priority, and nothing else changed, the program's own structs included.
// Lavapipe's one queue has none to spare (the layer tests on it say the report's "shared"); this
// is the rewriting a GPU's device gets.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "device_additions.hpp"

namespace tandem::layer {
namespace {

// The physical device: Vulkan 1.3, every extension and feature Tandem asks for, and three queue
// families: 0 graphics+compute with 16 queues, 1 compute alone with 8, 2 graphics+compute with 1.
VKAPI_ATTR void VKAPI_CALL properties(VkPhysicalDevice, VkPhysicalDeviceProperties* out) {
    *out = VkPhysicalDeviceProperties{};
    out->apiVersion = VK_API_VERSION_1_3;
    std::strcpy(out->deviceName, "a device of the test's own");
}

VKAPI_ATTR VkResult VKAPI_CALL extensions(VkPhysicalDevice, const char*, std::uint32_t* count,
                                          VkExtensionProperties* out) {
    static const std::vector<VkExtensionProperties> all = [] {
        std::vector<VkExtensionProperties> list;
        for (const Requirement& r : embedding_requirements().device_extensions) {
            VkExtensionProperties e{};
            std::strncpy(e.extensionName, r.name.c_str(), VK_MAX_EXTENSION_NAME_SIZE - 1);
            list.push_back(e);
        }
        return list;
    }();
    if (out == nullptr) {
        *count = static_cast<std::uint32_t>(all.size());
        return VK_SUCCESS;
    }
    *count = std::min<std::uint32_t>(*count, static_cast<std::uint32_t>(all.size()));
    std::copy_n(all.begin(), *count, out);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL features(VkPhysicalDevice, VkPhysicalDeviceFeatures2* out) {
    for (auto* s = static_cast<VkBaseOutStructure*>(out->pNext); s != nullptr; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) {
            auto* v12 = reinterpret_cast<VkPhysicalDeviceVulkan12Features*>(s);
            v12->timelineSemaphore = VK_TRUE;
            v12->hostQueryReset = VK_TRUE;
        } else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES) {
            auto* v13 = reinterpret_cast<VkPhysicalDeviceVulkan13Features*>(s);
            v13->synchronization2 = VK_TRUE;
            v13->dynamicRendering = VK_TRUE;
            v13->maintenance4 = VK_TRUE;
        }
    }
}

VKAPI_ATTR void VKAPI_CALL families(VkPhysicalDevice, std::uint32_t* count,
                                    VkQueueFamilyProperties* out) {
    const VkQueueFlags both = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    const VkQueueFamilyProperties all[] = {{both | VK_QUEUE_TRANSFER_BIT, 16, 64, {1, 1, 1}},
                                           {VK_QUEUE_COMPUTE_BIT, 8, 64, {1, 1, 1}},
                                           {both, 1, 64, {1, 1, 1}}};
    if (out == nullptr) {
        *count = 3;
        return;
    }
    *count = std::min<std::uint32_t>(*count, 3);
    std::copy_n(all, *count, out);
}

InstanceDispatch fake_instance() {
    InstanceDispatch d;
    d.GetPhysicalDeviceProperties = properties;
    d.EnumerateDeviceExtensionProperties = extensions;
    d.GetPhysicalDeviceFeatures2 = features;
    d.GetPhysicalDeviceQueueFamilyProperties = families;
    return d;
}

VkDeviceQueueCreateInfo queue_info(std::uint32_t family, std::uint32_t count,
                                   const float* priorities, VkDeviceQueueCreateFlags flags = 0) {
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.flags = flags;
    q.queueFamilyIndex = family;
    q.queueCount = count;
    q.pQueuePriorities = priorities;
    return q;
}

VkDeviceCreateInfo device_info(const std::vector<VkDeviceQueueCreateInfo>& queues) {
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.queueCreateInfoCount = static_cast<std::uint32_t>(queues.size());
    info.pQueueCreateInfos = queues.data();
    return info;
}

const VkPhysicalDevice k_physical = reinterpret_cast<VkPhysicalDevice>(0x1);

TEST(DeviceAdditions, AGraphicsComputeFamilyWithAQueueToSpareGivesTandemOneMore) {
    const float program_priorities[] = {0.5f};
    const float compute_priorities[] = {1.0f, 0.25f};
    const std::vector<VkDeviceQueueCreateInfo> program = {queue_info(0, 1, program_priorities),
                                                          queue_info(1, 2, compute_priorities)};
    const VkDeviceCreateInfo info = device_info(program);
    const InstanceDispatch instance = fake_instance();
    DeviceAdditions additions(instance, k_physical, info);
    ASSERT_TRUE(additions.refusal().empty()) << additions.refusal();
    additions.add_spare_queues(instance, k_physical);

    ASSERT_EQ(additions.spare_queues().size(), 1u);
    EXPECT_EQ(additions.spare_queues().at(0), 1u) << "after the program's one queue";
    const VkDeviceCreateInfo& down = additions.create_info();
    ASSERT_EQ(down.queueCreateInfoCount, 2u);
    EXPECT_NE(down.pQueueCreateInfos, program.data()) << "the program's array is not written";
    const VkDeviceQueueCreateInfo& graphics = down.pQueueCreateInfos[0];
    EXPECT_EQ(graphics.queueFamilyIndex, 0u);
    ASSERT_EQ(graphics.queueCount, 2u);
    EXPECT_EQ(graphics.pQueuePriorities[0], 0.5f);
    EXPECT_EQ(graphics.pQueuePriorities[1], 0.5f) << "Tandem's at the program's first priority";
    // A compute-only family is not one Tandem's queue can be.
    const VkDeviceQueueCreateInfo& compute = down.pQueueCreateInfos[1];
    EXPECT_EQ(compute.queueFamilyIndex, 1u);
    EXPECT_EQ(compute.queueCount, 2u);
    EXPECT_EQ(compute.pQueuePriorities, compute_priorities);
    // The program's own entries as it wrote them.
    EXPECT_EQ(program[0].queueCount, 1u);
    EXPECT_EQ(program[0].pQueuePriorities, program_priorities);
}

TEST(DeviceAdditions, NoQueueIsAddedWhereTheFamilyHasNoneToSpareOrTheEntryHasFlags) {
    const std::vector<float> priorities(16, 1.0f);
    const std::vector<std::vector<VkDeviceQueueCreateInfo>> cases = {
        {queue_info(2, 1, priorities.data())},  // its one queue is the program's
        {queue_info(0, 16, priorities.data())}, // all sixteen are
        {queue_info(0, 1, priorities.data(), VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT)},
        {}};
    const InstanceDispatch instance = fake_instance();
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const VkDeviceCreateInfo info = device_info(cases[i]);
        DeviceAdditions additions(instance, k_physical, info);
        ASSERT_TRUE(additions.refusal().empty()) << additions.refusal();
        additions.add_spare_queues(instance, k_physical);
        EXPECT_TRUE(additions.spare_queues().empty()) << "case " << i;
        EXPECT_EQ(additions.create_info().pQueueCreateInfos, info.pQueueCreateInfos) << i;
        EXPECT_EQ(additions.create_info().queueCreateInfoCount, info.queueCreateInfoCount) << i;
    }
}

} // namespace
} // namespace tandem::layer
