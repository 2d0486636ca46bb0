// Quiet defaults when embedded: an embedded runtime's workers with "auto" are the instance's
// other GPUs, one opening each; a CPU device and further openings of the application's GPU
// only when the options ask; TANDEM_VIRTUAL_DEVICES is not read. Neither an embedded nor a
// standalone runtime changes the process's environment.
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/discovery.hpp"
#include "runtime_fixture.hpp"

extern char** environ;

namespace tandem::test {
namespace {

// Adapters as discover_adapters lists them, on stand-in physical devices (never called).
detail::Adapter adapter(std::uintptr_t physical, std::uint32_t index, const std::string& type,
                        std::uint32_t opening, const std::string& name) {
    detail::Adapter a;
    a.physical = reinterpret_cast<VkPhysicalDevice>(physical);
    a.info.index = index;
    a.info.type = type;
    a.info.virtual_index = opening;
    a.info.name = name;
    return a;
}

// The application's GPU, a second GPU and lavapipe, each opened `openings` times.
std::vector<detail::Adapter> machine(std::uint32_t openings) {
    std::vector<detail::Adapter> out;
    const std::vector<std::pair<std::string, std::string>> devices{
        {"discrete", "GPU A"}, {"discrete", "GPU B"}, {"cpu", "llvmpipe"}};
    for (std::size_t p = 0; p < devices.size(); ++p) {
        for (std::uint32_t v = 0; v < openings; ++v) {
            out.push_back(adapter(0x1000 * (p + 1), static_cast<std::uint32_t>(out.size()),
                                  devices[p].first, v, devices[p].second));
        }
    }
    return out;
}

TEST(EmbeddedWorkers, AutoIsTheOtherGpusOneOpeningEach) {
    const auto adapters = machine(1);
    EXPECT_EQ(detail::select_embedded_workers(adapters, 0, "auto", false),
              (std::vector<std::uint32_t>{1}));
    EXPECT_EQ(detail::select_embedded_workers(adapters, 1, "auto", false),
              (std::vector<std::uint32_t>{0}));
}

TEST(EmbeddedWorkers, CpuDevicesOnlyWhenAsked) {
    const auto adapters = machine(1);
    EXPECT_EQ(detail::select_embedded_workers(adapters, 0, "auto", true),
              (std::vector<std::uint32_t>{1, 2}));
    EXPECT_EQ(detail::select_embedded_workers(adapters, 0, "llvmpipe", false),
              (std::vector<std::uint32_t>{2}));
    EXPECT_TRUE(detail::select_embedded_workers(adapters, 0, "none", false).empty());
}

// Openings exist only where the options asked for virtual devices: then the other openings of
// every GPU, the application's own included, are workers; lavapipe's still only when asked.
TEST(EmbeddedWorkers, FurtherOpeningsOnlyWhereVirtualDevicesAsked) {
    const auto adapters = machine(2); // A: 0 1, B: 2 3, lavapipe: 4 5
    EXPECT_EQ(detail::select_embedded_workers(adapters, 0, "auto", false),
              (std::vector<std::uint32_t>{1, 2, 3}));
    EXPECT_EQ(detail::select_embedded_workers(adapters, 0, "auto", true),
              (std::vector<std::uint32_t>{1, 2, 3, 4, 5}));
}

// A lone device embedded: nothing is added for it (standalone adds a second opening).
TEST(EmbeddedWorkers, ALoneDeviceGetsNoSecondOpening) {
    std::vector<detail::Adapter> lone{adapter(0x1000, 0, "cpu", 0, "llvmpipe")};
    EXPECT_TRUE(detail::select_embedded_workers(lone, 0, "auto", true).empty());
    EXPECT_EQ(lone.size(), 1u);
    std::vector<detail::Adapter> standalone = lone;
    const detail::Selection selection = detail::select_adapters(standalone, "auto", "auto");
    EXPECT_EQ(selection.workers.size(), 1u);
    EXPECT_EQ(standalone.size(), 2u);
}

// Every variable of the process's environment, as "NAME=value".
std::vector<std::string> environment() {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        out.emplace_back(*e);
    }
    return out;
}

// Sets a variable for the test's scope and restores what was there.
class ScopedVariable {
public:
    ScopedVariable(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name)) {
            m_old = old;
        }
        ::setenv(name, value, 1);
    }
    ~ScopedVariable() {
        if (m_old) {
            ::setenv(m_name.c_str(), m_old->c_str(), 1);
        } else {
            ::unsetenv(m_name.c_str());
        }
    }
    ScopedVariable(const ScopedVariable&) = delete;
    ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

// On this machine's adapters: lavapipe, the fixture's instance opening it once.
class EmbeddedDefaultsTest : public RuntimeTest {
protected:
    std::uint32_t virtual_devices() const override { return 1; }

    // Embeds the fixture's device with `options` as they are (make_runtime sets its own
    // worker selection and openings).
    std::unique_ptr<Runtime> embed(const RuntimeOptions& options) {
        detail::Device& device = open(0, {true, "app"});
        EmbedInfo embed;
        embed.instance = instance().handle();
        embed.physical_device = device.physical();
        embed.device = device.handle();
        embed.queue_family = device.queue(detail::QueueRole::Main).family();
        embed.queue_index = device.queue(detail::QueueRole::Main).index();
        embed.queue_mutex = std::make_shared<std::mutex>();
        embed.enabled_extensions = device.enabled_extensions();
        embed.enabled_features = device.enabled_features();
        embed.debug_utils = instance().has_debug_utils();
        return std::make_unique<Runtime>(embed, options);
    }
};

// The machine's one device, embedded with default options: no worker at all, whatever
// TANDEM_VIRTUAL_DEVICES says, and a task placed auto runs on the primary without trial jobs.
TEST_F(EmbeddedDefaultsTest, DefaultOptionsOpenNothingMore) {
    const ScopedVariable ignored("TANDEM_VIRTUAL_DEVICES", "3");
    const std::vector<std::string> before = environment();
    auto runtime = embed({});
    std::vector<std::uint32_t> other_gpus; // the fixture's adapters: each device opened once
    for (const auto& a : adapters()) {
        if (a.physical != adapters()[0].physical && a.info.type != "cpu") {
            other_gpus.push_back(a.info.index);
        }
    }
    std::vector<std::uint32_t> workers;
    for (const DeviceInfo& w : runtime->worker_devices()) {
        workers.push_back(w.index);
    }
    EXPECT_EQ(workers, other_gpus);
    if (other_gpus.empty()) { // lavapipe alone, as on the test machine
        const TaskId task = runtime->register_task(pattern_task("auto"));
        ASSERT_TRUE(pump_until(*runtime, [&] {
            (void)runtime->submit(task);
            return runtime->stats(task).ready >= 3;
        }));
        EXPECT_EQ(runtime->stats(task).trial_jobs, 0u);
    }
    runtime.reset();
    EXPECT_EQ(environment(), before);
}

// The options ask: a further opening of the application's device is a worker.
TEST_F(EmbeddedDefaultsTest, VirtualDevicesOptionOpensTheApplicationsDeviceAgain) {
    RuntimeOptions options;
    options.virtual_devices = 2;
    auto runtime = embed(options);
    std::size_t own_openings = 0;
    for (const DeviceInfo& w : runtime->worker_devices()) {
        own_openings += w.device_uuid == runtime->primary_device().device_uuid ? 1 : 0;
        EXPECT_TRUE(w.type != "cpu" || w.device_uuid == runtime->primary_device().device_uuid)
            << w.name << ": a CPU device nobody asked for";
    }
    EXPECT_EQ(own_openings, 1u);
}

// A standalone runtime opens its own instance and devices; the environment stays as it was
// (LP_NUM_THREADS included: the `tandem` tool sets that for itself).
TEST(StandaloneEnvironment, ARuntimeChangesNoVariable) {
    const std::vector<std::string> before = environment();
    {
        RuntimeOptions options;
        options.validation = "off";
        Runtime runtime(options);
        EXPECT_FALSE(runtime.worker_devices().empty()); // a lone device opened twice
    }
    EXPECT_EQ(environment(), before);
}

} // namespace
} // namespace tandem::test
