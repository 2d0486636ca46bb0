// RuntimeTest: a VulkanTest whose runtime embeds the fixture's own instance and device (so the
// fixture's validation counter sees everything the runtime does, shutdown included), with
// helpers to pump until a condition holds and to read leased images back for verification.
#pragma once

#include <chrono>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/lease_reader.hpp"
#include "runtime/runtime_impl.hpp"
#include "runtime/runtime_probe.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"
#include "task_id_print.hpp"
#include "vk_fixture.hpp"
#include "workloads/pattern.hpp"

namespace tandem::test {

class RuntimeTest : public VulkanTest {
protected:
    std::uint32_t virtual_devices() const override { return 3; }

    std::unique_ptr<Runtime> make_runtime(const std::string& workers = "none",
                                          RuntimeOptions options = {}) {
        detail::Device& device = open(0, {true, "app"});
        m_app = &device;
        EmbedInfo embed;
        embed.instance = instance().handle();
        embed.physical_device = device.physical();
        embed.device = device.handle();
        embed.queue_family = device.queue(detail::QueueRole::Main).family();
        embed.queue_index = device.queue(detail::QueueRole::Main).index();
        if (!m_own_queue) {
            embed.queue_mutex = std::make_shared<std::mutex>();
        }
        embed.enabled_extensions = device.enabled_extensions();
        embed.enabled_features = device.enabled_features();
        embed.debug_utils = instance().has_debug_utils();
        options.workers = workers;
        options.virtual_devices = virtual_devices();
        return std::make_unique<Runtime>(embed, options);
    }

    // make_runtime() hands the queue over with no mutex: Tandem's alone, so that its input
    // copies leave the application's thread. The test's own submissions there then take Tandem's
    // lock (Runtime::primary_vulkan), and never wait on that queue for the input timeline.
    void hand_over_queue() { m_own_queue = true; }

    // The application's device the last make_runtime() embedded (its images are the
    // primary's).
    [[nodiscard]] detail::Device& app_device() const { return *m_app; }

    static TaskDesc pattern_task(const std::string& placement = "primary", std::uint32_t w = 64,
                                 std::uint32_t h = 48) {
        TaskDesc d;
        d.name = "pattern-" + placement;
        d.width = w;
        d.height = h;
        d.placement = Placement::parse(placement).value();
        return d;
    }

    // Pumps until `done` or 30 s (a failure, not a hang).
    static bool pump_until(Runtime& runtime, const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!done()) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            runtime.pump();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return true;
    }

    // Reads the whole leased image on the primary (without releasing) and returns the bytes.
    static std::vector<std::uint8_t> read_back(harness::LeaseReader& reader, const Lease& lease,
                                               std::uint64_t& value) {
        value = reader.read(lease, true);
        EXPECT_NE(value, 0u);
        EXPECT_EQ(reader.wait(value, std::chrono::seconds(10)), VK_SUCCESS);
        const auto* px = reader.pixels(value);
        const std::size_t bytes = std::size_t{lease.extent.width} * lease.extent.height * 4;
        return px ? std::vector<std::uint8_t>(px, px + bytes) : std::vector<std::uint8_t>{};
    }

    // Submits `bytes` to `task`, whose workload fills its w x h output with one RGBA8 colour,
    // waits for its first output, checks that every texel of it is `colour`, and unregisters
    // the task: that a runtime still works (after a refusal, say).
    static void expect_first_output_filled(Runtime& runtime, harness::LeaseReader& reader,
                                           TaskId task, std::span<const std::byte> bytes,
                                           std::uint32_t colour, std::uint32_t w, std::uint32_t h) {
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.submit(task, bytes).accepted(); }));
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.stats(task).ready == 1; }))
            << runtime.stats(task).workload_error;
        auto lease = runtime.acquire(task);
        ASSERT_TRUE(lease);
        std::uint64_t v = 0;
        const auto px = read_back(reader, *lease, v);
        runtime.release(*lease, v);
        ASSERT_EQ(px.size(), std::size_t{w} * h * 4);
        for (std::size_t i = 0; i < px.size(); i += 4) {
            std::uint32_t texel = 0;
            std::memcpy(&texel, px.data() + i, 4);
            ASSERT_EQ(texel, colour) << "texel " << i / 4;
        }
        EXPECT_EQ(runtime.unregister_task(task), TaskError::None);
    }

    static void expect_pattern(const std::vector<std::uint8_t>& px, const Lease& lease) {
        ASSERT_EQ(px.size(), std::size_t{lease.extent.width} * lease.extent.height * 4);
        EXPECT_EQ(detail::pattern_mismatch(px.data(), lease.generation, lease.extent.width,
                                           lease.extent.height),
                  -1)
            << "generation " << lease.generation << " slot " << lease.slot;
    }

    // Frames of: a submit to every task, a pump, and a read of what acquire gives (the pattern
    // checked exactly every `check_every`-th frame), until every task delivered `ready` outputs:
    // a count, not a speed (a loaded machine, TSan and spinning threads on two cores take
    // seconds), with a deadline only against a hang.
    static void feed_until_ready(Runtime& runtime, harness::LeaseReader& reader,
                                 std::initializer_list<TaskId> tasks, std::uint64_t ready,
                                 int check_every) {
        const auto all_ready = [&] {
            for (const TaskId t : tasks) {
                if (runtime.stats(t).ready < ready) {
                    return false;
                }
            }
            return true;
        };
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (int frame = 0; std::chrono::steady_clock::now() < deadline; ++frame) {
            for (const TaskId t : tasks) {
                (void)runtime.submit(t);
            }
            runtime.pump();
            for (const TaskId t : tasks) {
                if (auto lease = runtime.acquire(t)) {
                    std::uint64_t v = 0;
                    if (frame % check_every == 0) {
                        expect_pattern(read_back(reader, *lease, v), *lease);
                    }
                    runtime.release(*lease, v);
                }
            }
            if (all_ready()) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        for (const TaskId t : tasks) {
            EXPECT_GE(runtime.stats(t).ready, ready) << "task " << t;
        }
    }

    static std::unique_ptr<harness::LeaseReader> make_reader(Runtime& runtime, std::uint32_t w = 64,
                                                             std::uint32_t h = 48) {
        return std::make_unique<harness::LeaseReader>(runtime, 3, w, h);
    }

private:
    detail::Device* m_app = nullptr;
    bool m_own_queue = false;
};

} // namespace tandem::test
