// What lavapipe offers, pinned. The transfer and runtime tests skip a case whose path a pair
// lacks, so a capability detection that broke would turn them into skips, not failures; this test
// fails instead. It reads the driver id from Vulkan itself and, for every pair of lavapipe
// openings that real discovery reports, asserts the exact paths and the synchronisation.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/capabilities.hpp"
#include "core/discovery.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

VkDriverId driver_id(VkPhysicalDevice physical) {
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    properties.pNext = &driver;
    vkGetPhysicalDeviceProperties2(physical, &properties);
    return driver.driverID;
}

// Whether the driver exports and imports timeline semaphores as opaque fds, asked of Vulkan
// directly (not through Tandem's capability query, which is what is checked here). Mesa 22.3's
// lavapipe (Debian 12) has no VK_KHR_external_semaphore_fd: no.
bool driver_shares_timelines(VkPhysicalDevice physical, const DeviceInfo& info) {
    if (!detail::has_extension(info, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
        return false;
    }
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkPhysicalDeviceExternalSemaphoreInfo query{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
    query.pNext = &type;
    query.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties properties{VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    vkGetPhysicalDeviceExternalSemaphoreProperties(physical, &query, &properties);
    const VkExternalSemaphoreFeatureFlags both =
        VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
    return (properties.externalSemaphoreFeatures & both) == both;
}

std::set<TransferPath> available_paths(const PairInfo& pair) {
    std::set<TransferPath> paths;
    for (const PathAvailability& a : pair.paths) {
        if (a.available) {
            paths.insert(a.path);
        }
    }
    return paths;
}

std::string names(const std::set<TransferPath>& paths) {
    std::string text;
    for (const TransferPath path : paths) {
        text += (text.empty() ? "" : ", ") + std::string(to_string(path));
    }
    return text;
}

class LavapipeCapabilities : public VulkanTest {
protected:
    // A primary and two workers, as the runtime's tests open lavapipe.
    std::uint32_t virtual_devices() const override { return 3; }
};

TEST_F(LavapipeCapabilities, EveryPairOfOpeningsHasTheirPathsAndAHostBridge) {
    std::vector<const detail::Adapter*> lavapipe;
    for (const detail::Adapter& adapter : adapters()) {
        if (driver_id(adapter.physical) == VK_DRIVER_ID_MESA_LLVMPIPE) {
            lavapipe.push_back(&adapter);
        }
    }
    if (lavapipe.empty()) {
        GTEST_SKIP() << "[expected-skip:no-lavapipe] no adapter is lavapipe (mesa-vulkan-drivers)";
    }
    ASSERT_EQ(lavapipe.size() % virtual_devices(), 0u) << "each device opened three times";
    for (const detail::Adapter* adapter : lavapipe) {
        const DeviceFeatures& f = adapter->info.features;
        SCOPED_TRACE("adapter " + std::to_string(adapter->info.index) + " " + adapter->info.name);
        EXPECT_EQ(adapter->info.type, "cpu");
        EXPECT_TRUE(f.timeline_semaphore);
        EXPECT_TRUE(f.synchronization2);
        EXPECT_TRUE(f.external_memory_host);
        EXPECT_GT(f.min_imported_host_pointer_alignment, 0u);
        EXPECT_TRUE(f.external_memory_fd);
        EXPECT_TRUE(f.external_memory_fd_image);
        EXPECT_EQ(f.external_semaphore_fd_timeline,
                  driver_shares_timelines(adapter->physical, adapter->info));
    }
    const std::set<TransferPath> between_openings = {
        TransferPath::ZeroCopy, TransferPath::SharedMemory, TransferPath::HostImported,
        TransferPath::HostCopy};
    std::size_t pairs = 0;
    for (const detail::Adapter* worker : lavapipe) {
        for (const detail::Adapter* primary : lavapipe) {
            const PairInfo pair = detail::query_pair_info(worker->info, primary->info);
            SCOPED_TRACE("worker " + std::to_string(worker->info.index) + " -> primary " +
                         std::to_string(primary->info.index));
            const std::set<TransferPath> paths = available_paths(pair);
            if (worker->info.index == primary->info.index) {
                EXPECT_EQ(paths, std::set<TransferPath>{TransferPath::SameDevice}) << names(paths);
                EXPECT_TRUE(pair.gpu_side_sync) << pair.sync_reason;
                continue;
            }
            ++pairs;
            const bool same_physical = worker->physical == primary->physical;
            if (same_physical) {
                EXPECT_EQ(paths, between_openings) << names(paths);
                EXPECT_EQ(pair.best_path(), TransferPath::ZeroCopy);
            }
            EXPECT_FALSE(pair.allows(TransferPath::CudaPeer)) << "lavapipe is no CUDA device";
            const bool shares =
                same_physical && driver_shares_timelines(worker->physical, worker->info);
            EXPECT_EQ(pair.gpu_side_sync, shares) << pair.sync_reason;
            if (!shares) {
                EXPECT_NE(pair.sync_reason.find("host bridge"), std::string::npos)
                    << pair.sync_reason;
            }
        }
    }
    EXPECT_GE(pairs, 6u) << "three openings make six ordered pairs";
}

} // namespace
} // namespace tandem::test
