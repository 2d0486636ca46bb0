// What Tandem leaves to the application on the CPU: a CPU Vulkan device keeps two hardware
// threads free on a machine with cores to spare, and none is taken on a small one; the threads
// Tandem starts wake on time from their short sleeps, and the application's threads keep theirs.
#include <gtest/gtest.h>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "core/cpu.hpp"
#include "core/log.hpp"

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

#if defined(__linux__)
TEST(ThreadTimerSlack, TandemsThreadsWakeWithinAMicrosecondAndTheCallersKeepsItsOwn) {
    const auto slack = [] {
        return static_cast<unsigned long>(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    };
    const unsigned long callers = slack();
    unsigned long started = 0;
    detail::start_logged_thread([&] { started = slack(); }).join();
    EXPECT_EQ(started, detail::k_thread_timer_slack_ns);
    EXPECT_EQ(slack(), callers) << "the calling (application's) thread's slack changed";
}
#endif

} // namespace
} // namespace tandem::test
