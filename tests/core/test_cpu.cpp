// What Tandem leaves to the application on the CPU: a CPU Vulkan device keeps two hardware
// threads free on a machine with cores to spare, and none is taken on a small one; a thread of
// Tandem's that sleeps instead of polling wakes on time, and the application's threads keep theirs.
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
TEST(ThreadTimerSlack, AThreadThatSleepsWakesWithinAMicrosecondAndOthersKeepTheirs) {
    const auto slack = [] {
        return static_cast<unsigned long>(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    };
    const unsigned long callers = slack();
    unsigned long tightened = 0;
    unsigned long plain = 0;
    const std::uint64_t counted = detail::tightened_threads();
    detail::start_waiting_thread(true, [&] { tightened = slack(); }).join();
    EXPECT_EQ(detail::tightened_threads(), counted + 1);
    detail::start_waiting_thread(false, [&] { plain = slack(); }).join();
    EXPECT_EQ(tightened, detail::k_thread_timer_slack_ns);
    EXPECT_EQ(plain, callers) << "a thread that polls first keeps the default";
    EXPECT_EQ(slack(), callers) << "the calling (application's) thread's slack changed";
}
#endif

} // namespace
} // namespace tandem::test
