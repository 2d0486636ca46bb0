// What Tandem leaves to the application on the CPU: a CPU Vulkan device keeps two hardware
// threads free on a machine with cores to spare, and none is taken on a small one.
#include <gtest/gtest.h>

#include "core/cpu.hpp"

namespace tandem::test {
namespace {

TEST(CpuDeviceThreads, KeepTwoThreadsForTheApplicationWhereThereAreCoresToSpare) {
    EXPECT_EQ(detail::cpu_device_threads(16), 14u);
    EXPECT_EQ(detail::cpu_device_threads(detail::k_spare_core_threshold),
              detail::k_spare_core_threshold - detail::k_cores_kept_from_cpu_devices);
    EXPECT_EQ(detail::cpu_device_threads(128), 126u);
}

TEST(CpuDeviceThreads, ASmallMachineKeepsTheDriversDefault) {
    EXPECT_EQ(detail::cpu_device_threads(2), std::nullopt);
    EXPECT_EQ(detail::cpu_device_threads(detail::k_spare_core_threshold - 1), std::nullopt);
}

} // namespace
} // namespace tandem::test
