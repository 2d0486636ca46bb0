// The embedding contract (tandem/embedding.hpp) as an engine meets it: embedding_requirements()
// lists what the device supports, and a device created from exactly what it returns is embedded
// and runs tasks on the primary and on a worker; a device created without a required feature is
// refused with an Error naming it; a device created without an optional extension or feature is
// embedded, its DeviceInfo and pair reasons say what that rules out, no path is tried that needs
// it (none fails or is dropped), and a task on a worker delivers exact outputs. The requirements'
// queue entries list the device's graphics+compute families; a queue handed over with no mutex
// (alone, or a second queue of the family while the engine submits to its first) carries tasks
// on the primary and on a worker exactly.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/capabilities.hpp"
#include "core/embedding.hpp"
#include "runtime_fixture.hpp"
#include "tandem/embedding.hpp"

namespace tandem::test {
namespace {

// The feature member named `name` in either struct, or null.
VkBool32* feature_member(VkPhysicalDeviceVulkan12Features& f12,
                         VkPhysicalDeviceVulkan13Features& f13, const std::string& name) {
    if (name == "timelineSemaphore") {
        return &f12.timelineSemaphore;
    }
    if (name == "hostQueryReset") {
        return &f12.hostQueryReset;
    }
    if (name == "synchronization2") {
        return &f13.synchronization2;
    }
    if (name == "dynamicRendering") {
        return &f13.dynamicRendering;
    }
    if (name == "maintenance4") {
        return &f13.maintenance4;
    }
    return nullptr;
}

// The queues an engine creates in its main family, and which one it hands Tandem.
struct EngineQueues {
    std::uint32_t created = 1;
    std::uint32_t tandems = 0;
    bool shared_mutex = true; // false: queue_mutex null, the queue is Tandem's alone
};

// The number of queues the first graphics+compute family offers, from the requirements.
std::uint32_t main_family_queue_count(VkPhysicalDevice physical) {
    const EmbeddingRequirements need = embedding_requirements(physical);
    const auto& families = need.queues.at(0).families;
    return families.empty() ? 0 : families.front().queue_count;
}

// An engine's own device, created the way an engine would from embedding_requirements(), less
// `left_out` (an extension or feature name; empty: nothing left out). Owned: destroyed last.
class EngineDevice {
public:
    EngineDevice(VkPhysicalDevice physical, const std::string& left_out, EngineQueues queues = {}) {
        const EmbeddingRequirements need = embedding_requirements(physical);
        std::uint32_t count = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
        std::vector<VkQueueFamilyProperties> families(count);
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
        for (std::uint32_t i = 0; i < count; ++i) {
            if ((families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0 &&
                (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
                m_family = i;
                break;
            }
        }
        std::vector<const char*> extensions;
        for (const char* name : need.device_extension_names()) {
            if (left_out != name) {
                extensions.push_back(name);
            }
        }
        // The engine's own structs, with a feature of its own Tandem does not ask for.
        VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
        VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        f12.pNext = &f13;
        f12.scalarBlockLayout = VK_TRUE;
        need.merge_features(f12, f13);
        if (VkBool32* member = feature_member(f12, f13, left_out)) {
            *member = VK_FALSE;
        }
        const std::vector<float> priorities(queues.created, 1.0f);
        VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue.queueFamilyIndex = m_family;
        queue.queueCount = queues.created;
        queue.pQueuePriorities = priorities.data();
        VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        info.pNext = &f12;
        info.queueCreateInfoCount = 1;
        info.pQueueCreateInfos = &queue;
        info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
        info.ppEnabledExtensionNames = extensions.data();
        EXPECT_EQ(vkCreateDevice(physical, &info, nullptr, &m_device), VK_SUCCESS);
        m_embed.physical_device = physical;
        m_embed.device = m_device;
        m_embed.queue_family = m_family;
        m_embed.queue_index = queues.tandems;
        if (queues.shared_mutex) {
            m_embed.queue_mutex = std::make_shared<std::mutex>();
        }
        m_embed.set_enabled(info);
    }
    ~EngineDevice() {
        if (m_device != VK_NULL_HANDLE) {
            vkDestroyDevice(m_device, nullptr);
        }
    }
    EngineDevice(const EngineDevice&) = delete;
    EngineDevice& operator=(const EngineDevice&) = delete;

    [[nodiscard]] VkDevice handle() const { return m_device; }
    [[nodiscard]] std::uint32_t family() const { return m_family; }

    // What the engine hands Tandem for this device on `instance`.
    [[nodiscard]] EmbedInfo embed(VkInstance instance, bool debug_utils) const {
        EmbedInfo e = m_embed;
        e.instance = instance;
        e.debug_utils = debug_utils;
        return e;
    }

private:
    VkDevice m_device = VK_NULL_HANDLE;
    std::uint32_t m_family = 0;
    EmbedInfo m_embed;
};

class EmbeddingTest : public RuntimeTest {
protected:
    // lavapipe opened twice: the engine's device and one worker the runtime opens.
    std::uint32_t virtual_devices() const override { return 2; }

    [[nodiscard]] VkPhysicalDevice physical() { return adapters().at(0).physical; }

    std::unique_ptr<Runtime> embed(const EngineDevice& device, const std::string& workers) {
        RuntimeOptions options;
        options.workers = workers;
        options.virtual_devices = virtual_devices();
        return std::make_unique<Runtime>(
            device.embed(instance().handle(), instance().has_debug_utils()), options);
    }

    // Runs a pattern task at `placement` until 4 outputs were checked exactly, and returns its
    // stats.
    TaskStats run_pattern(Runtime& runtime, const std::string& placement) {
        auto reader = make_reader(runtime);
        const TaskId task = runtime.register_task(pattern_task(placement));
        feed_until_ready(runtime, *reader, {task}, 4, 1);
        return runtime.stats(task);
    }

    // Pattern tasks on the primary (job threads submit to the embedded queue) and on a worker
    // (the copy onto the primary does) deliver exact images and drop no path.
    void expect_runs_on_primary_and_worker(Runtime& runtime) {
        for (const std::string placement : {"primary", "worker:0"}) {
            const TaskStats stats = run_pattern(runtime, placement);
            EXPECT_GE(stats.ready, 4u) << placement;
            EXPECT_TRUE(stats.dropped_paths.empty()) << placement;
        }
    }

    // The pair cell the runtime's transfer layer works from: its worker's and its primary's
    // DeviceInfo as the runtime reports them.
    static PairInfo runtime_pair(const Runtime& runtime) {
        return detail::query_pair_info(runtime.worker_devices().at(0), runtime.primary_device());
    }
};

TEST_F(EmbeddingTest, TheRequirementsListWhatTheDeviceSupports) {
    const EmbeddingRequirements need = embedding_requirements(physical());
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(physical(), &props);
    EXPECT_EQ(need.api_version, VK_API_VERSION_1_3);
    EXPECT_EQ(need.device_api_version, props.apiVersion);
    EXPECT_TRUE(need.satisfied()) << need.missing();
    const DeviceInfo& driver = adapters().at(0).info;
    const std::vector<std::string> extensions = {
        VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
        VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME,
        VK_EXT_MEMORY_BUDGET_EXTENSION_NAME};
    ASSERT_EQ(need.device_extensions.size(), extensions.size());
    for (const Requirement& e : need.device_extensions) {
        EXPECT_NE(std::find(extensions.begin(), extensions.end(), e.name), extensions.end())
            << e.name;
        EXPECT_FALSE(e.required) << e.name;
        EXPECT_EQ(e.supported, detail::has_extension(driver, e.name)) << e.name;
        EXPECT_FALSE(e.unlocks.empty()) << e.name;
        const auto names = need.device_extension_names();
        const bool listed =
            std::any_of(names.begin(), names.end(), [&](const char* n) { return e.name == n; });
        EXPECT_EQ(listed, e.supported) << e.name;
    }
    // Required: the four features every device needs; optional: hostQueryReset.
    std::vector<std::string> required;
    for (const Requirement& f : need.features) {
        EXPECT_FALSE(f.structure.empty()) << f.name;
        EXPECT_FALSE(f.unlocks.empty()) << f.name;
        if (f.required) {
            required.push_back(f.name);
            EXPECT_TRUE(f.supported) << f.name;
        } else {
            EXPECT_EQ(f.name, "hostQueryReset");
            EXPECT_EQ(f.supported, driver.features.host_query_reset);
        }
    }
    EXPECT_EQ(required, (std::vector<std::string>{"timelineSemaphore", "synchronization2",
                                                  "dynamicRendering", "maintenance4"}));
    EXPECT_EQ(need.vulkan12.timelineSemaphore, VK_TRUE);
    EXPECT_EQ(need.vulkan12.hostQueryReset, driver.features.host_query_reset ? VK_TRUE : VK_FALSE);
    EXPECT_EQ(need.vulkan13.synchronization2, VK_TRUE);
    EXPECT_EQ(need.vulkan13.dynamicRendering, VK_TRUE);
    EXPECT_EQ(need.vulkan13.maintenance4, VK_TRUE);
    EXPECT_EQ(need.vulkan12.pNext, nullptr);
    EXPECT_EQ(need.vulkan13.pNext, nullptr);
    ASSERT_EQ(need.instance_extensions.size(), 1u);
    EXPECT_EQ(need.instance_extensions[0].name, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    EXPECT_FALSE(need.instance_extensions[0].required);

    // Before there is a device: the same items, none of the device's supported, and only the
    // required features in the structs.
    const EmbeddingRequirements before = embedding_requirements();
    EXPECT_EQ(before.device_api_version, 0u);
    EXPECT_EQ(before.device_extensions.size(), need.device_extensions.size());
    for (const Requirement& e : before.device_extensions) {
        EXPECT_FALSE(e.supported) << e.name;
    }
    EXPECT_TRUE(before.device_extension_names().empty());
    EXPECT_EQ(before.vulkan12.timelineSemaphore, VK_TRUE);
    EXPECT_EQ(before.vulkan12.hostQueryReset, VK_FALSE);
    EXPECT_EQ(before.vulkan13.maintenance4, VK_TRUE);
    EXPECT_TRUE(before.satisfied()) << before.missing();
}

TEST_F(EmbeddingTest, MergingKeepsTheEnginesOwnFeaturesAndChain) {
    const EmbeddingRequirements need = embedding_requirements(physical());
    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.pNext = &f13;
    f12.bufferDeviceAddress = VK_TRUE;
    f13.robustImageAccess = VK_TRUE;
    need.merge_features(f12, f13);
    EXPECT_EQ(f12.pNext, &f13);
    EXPECT_EQ(f12.bufferDeviceAddress, VK_TRUE);
    EXPECT_EQ(f13.robustImageAccess, VK_TRUE);
    EXPECT_EQ(f12.timelineSemaphore, VK_TRUE);
    EXPECT_EQ(f13.synchronization2, VK_TRUE);
    EXPECT_EQ(f13.dynamicRendering, VK_TRUE);
    EXPECT_EQ(f13.maintenance4, VK_TRUE);
    EXPECT_EQ(f12.hostQueryReset, need.vulkan12.hostQueryReset);
}

TEST_F(EmbeddingTest, EmbedInfoReadsWhatTheCreateInfoEnabled) {
    // Per-feature structs, as an engine written against Vulkan 1.1 extensions chains them.
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    timeline.timelineSemaphore = VK_TRUE;
    VkPhysicalDeviceSynchronization2Features sync2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
    sync2.synchronization2 = VK_TRUE;
    sync2.pNext = &timeline;
    VkPhysicalDeviceDynamicRenderingFeatures rendering{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES};
    rendering.pNext = &sync2; // dynamicRendering left off
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features2.pNext = &rendering;
    const char* names[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &features2;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = names;
    EmbedInfo embed;
    embed.enabled_extensions = {"stale"};
    embed.set_enabled(info);
    EXPECT_EQ(embed.enabled_extensions,
              std::vector<std::string>{VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME});
    EXPECT_TRUE(embed.enabled_features.timeline_semaphore);
    EXPECT_TRUE(embed.enabled_features.synchronization2);
    EXPECT_FALSE(embed.enabled_features.dynamic_rendering);
    EXPECT_FALSE(embed.enabled_features.maintenance4);
    EXPECT_FALSE(embed.enabled_features.host_query_reset);
}

TEST_F(EmbeddingTest, ADeviceCreatedFromTheRequirementsIsEmbeddedAndRunsTasks) {
    EngineDevice device(physical(), "");
    auto runtime = embed(device, "auto");
    ASSERT_EQ(runtime->worker_devices().size(), 1u);
    EXPECT_TRUE(runtime->primary_device().not_enabled.empty())
        << runtime->primary_device().not_enabled.front().name;
    EXPECT_EQ(runtime->primary_device().features.external_memory_fd,
              adapters().at(0).info.features.external_memory_fd);
    EXPECT_EQ(runtime->primary_device().features.host_query_reset,
              adapters().at(0).info.features.host_query_reset);
    for (const std::string placement : {"primary", "worker:0"}) {
        const TaskStats stats = run_pattern(*runtime, placement);
        EXPECT_TRUE(stats.dropped_paths.empty())
            << placement << ": " << stats.dropped_paths.front().path << ": "
            << stats.dropped_paths.front().reason;
    }
}

// A layer ending the runtime inside the engine's own vkDestroyDevice: the worker device stays
// open, and everything of Tandem's on the engine's device goes (the validation layer reports any
// object left on it when the device is destroyed).
TEST_F(EmbeddingTest, ARuntimeThatLeavesItsWorkersOpenFreesEverythingOnTheEnginesDevice) {
    {
        const EngineDevice device(physical(), "");
        auto runtime = embed(device, "auto");
        ASSERT_EQ(runtime->worker_devices().size(), 1u);
        EXPECT_GE(run_pattern(*runtime, "worker:0").ready, 4u);
        runtime->leave_devices_open();
        runtime.reset();
    } // the engine's vkDestroyDevice
    EXPECT_EQ(instance().validation_messages(), 0u) << instance().last_validation_message();
}

// A process that exits with the runtime alive stops it from an exit handler: its threads end, the
// work it submitted finishes within the wait, nothing is destroyed, and nothing runs afterwards.
// Destroyed later all the same, it frees everything.
TEST_F(EmbeddingTest, ARuntimeStoppedForExitRunsNothingMoreAndCanStillBeDestroyed) {
    {
        const EngineDevice device(physical(), "");
        auto runtime = embed(device, "auto");
        ASSERT_EQ(runtime->worker_devices().size(), 1u);
        auto reader = make_reader(*runtime);
        const TaskId task = runtime->register_task(pattern_task("worker:0"));
        feed_until_ready(*runtime, *reader, {task}, 4, 1);
        for (int i = 0; i < 3; ++i) {
            static_cast<void>(runtime->submit(task)); // in flight when the process exits
        }
        runtime->stop_for_exit(std::chrono::seconds(10));
        runtime->stop_for_exit(std::chrono::seconds(10)); // harmless twice
        runtime->pump(); // publishes what completed before the stop
        const std::uint64_t ready = runtime->stats(task).ready;
        for (int i = 0; i < 3; ++i) {
            static_cast<void>(runtime->submit(task));
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            runtime->pump();
        }
        EXPECT_EQ(runtime->stats(task).ready, ready) << "a job ran after the stop";
        // Accepted after the stop, each job was dropped at once (its slot failed), not left in
        // flight for ever.
        EXPECT_EQ(runtime->progress(task).in_flight, 0u) << "a job submitted after the stop";
        reader.reset();
        runtime.reset();
    } // the engine's vkDestroyDevice
    EXPECT_EQ(instance().validation_messages(), 0u) << instance().last_validation_message();
}

TEST_F(EmbeddingTest, TheRequirementsAskForAQueueAndOfferOneOfItsOwn) {
    const EmbeddingRequirements before = embedding_requirements();
    ASSERT_EQ(before.queues.size(), 2u);
    EXPECT_FALSE(before.queues[0].supported) << "nothing is known before a physical device";
    EXPECT_TRUE(before.queues[0].families.empty());
    EXPECT_TRUE(before.satisfied()) << before.missing();

    const EmbeddingRequirements need = embedding_requirements(physical());
    ASSERT_EQ(need.queues.size(), 2u);
    const QueueRequirement& shared = need.queues[0];
    const QueueRequirement& own = need.queues[1];
    EXPECT_TRUE(shared.required);
    EXPECT_FALSE(own.required);
    EXPECT_EQ(shared.count, 1u);
    EXPECT_EQ(own.count, 2u);
    for (const QueueRequirement* q : {&shared, &own}) {
        EXPECT_EQ(q->flags, VkQueueFlags{VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT});
        EXPECT_FALSE(q->unlocks.empty());
    }
    // The offers are exactly the device's graphics+compute families, with their queue counts.
    std::uint32_t count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical(), &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical(), &count, families.data());
    std::vector<QueueFamilyOffer> expected;
    for (std::uint32_t i = 0; i < count; ++i) {
        if ((families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0 &&
            (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
            expected.push_back({i, families[i].queueCount});
        }
    }
    ASSERT_EQ(shared.families.size(), expected.size());
    std::uint32_t most = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(shared.families[i].family, expected[i].family);
        EXPECT_EQ(shared.families[i].queue_count, expected[i].queue_count);
        most = std::max(most, expected[i].queue_count);
    }
    EXPECT_EQ(own.families.size(), expected.size());
    EXPECT_EQ(shared.supported, most >= 1);
    EXPECT_EQ(own.supported, most >= 2) << "a queue of its own needs a family with two";
    EXPECT_TRUE(need.satisfied()) << need.missing();
}

// What a caller in the device's call chain (a Vulkan layer) hands Tandem: get-proc-addr
// functions that count what Tandem looks up and route vkQueueSubmit2 and vkGetDeviceQueue
// through counting shims, standing in for the next layer's.
struct ChainSpy {
    static inline std::atomic<std::uint64_t> device_lookups{0};
    static inline std::atomic<std::uint64_t> instance_lookups{0};
    static inline std::atomic<std::uint64_t> submits{0};
    static inline std::atomic<std::uint64_t> queue_gets{0};

    static VKAPI_ATTR void VKAPI_CALL get_queue(VkDevice device, std::uint32_t family,
                                                std::uint32_t index, VkQueue* queue) {
        queue_gets.fetch_add(1);
        vkGetDeviceQueue(device, family, index, queue);
    }

    static VKAPI_ATTR VkResult VKAPI_CALL submit2(VkQueue queue, std::uint32_t count,
                                                  const VkSubmitInfo2* batches, VkFence fence) {
        submits.fetch_add(1);
        return vkQueueSubmit2(queue, count, batches, fence);
    }
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL device_proc(VkDevice device, const char* name) {
        device_lookups.fetch_add(1);
        if (std::strcmp(name, "vkQueueSubmit2") == 0) {
            return reinterpret_cast<PFN_vkVoidFunction>(&submit2);
        }
        if (std::strcmp(name, "vkGetDeviceQueue") == 0) {
            return reinterpret_cast<PFN_vkVoidFunction>(&get_queue);
        }
        return vkGetDeviceProcAddr(device, name);
    }
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL instance_proc(VkInstance instance,
                                                                  const char* name) {
        instance_lookups.fetch_add(1);
        return vkGetInstanceProcAddr(instance, name);
    }
};

TEST_F(EmbeddingTest, TheGetProcAddrFunctionsGivenAreWhereTandemsQueueCallsGo) {
    EngineDevice device(physical(), "");
    EmbedInfo embed = device.embed(instance().handle(), instance().has_debug_utils());
    embed.get_device_proc_addr = &ChainSpy::device_proc;
    embed.get_instance_proc_addr = &ChainSpy::instance_proc;
    RuntimeOptions options;
    options.workers = "auto";
    options.virtual_devices = virtual_devices();
    auto runtime = std::make_unique<Runtime>(embed, options);
    EXPECT_GT(ChainSpy::device_lookups.load(), 0u);
    if (instance().has_debug_utils()) {
        EXPECT_GT(ChainSpy::instance_lookups.load(), 0u) << "the debug-utils functions";
    }
    EXPECT_EQ(runtime->primary_vulkan().queue_submit2, &ChainSpy::submit2)
        << "a client submitting for Tandem (LeaseReadback) calls the same function";
    // The queue itself is looked up there too: a layer above that keeps the program's queues
    // never takes Tandem's for one of them.
    EXPECT_GT(ChainSpy::queue_gets.load(), 0u);
    const std::uint64_t before = ChainSpy::submits.load();
    // Both placements submit to the primary's queue: a job there, a delivery from the worker,
    // and the reader's readbacks.
    expect_runs_on_primary_and_worker(*runtime);
    EXPECT_GT(ChainSpy::submits.load(), before + 8);
}

TEST_F(EmbeddingTest, AQueueHandedOverAloneNeedsNoMutex) {
    // The engine's only queue, which the engine itself leaves to Tandem.
    EngineDevice device(physical(), "", EngineQueues{1, 0, false});
    auto runtime = embed(device, "auto");
    expect_runs_on_primary_and_worker(*runtime);
}

TEST_F(EmbeddingTest, ASecondQueueOfTheFamilyIsTandemsOwnWhileTheEngineSubmitsToItsFirst) {
    if (main_family_queue_count(physical()) < 2) {
        GTEST_SKIP() << "[expected-skip:one-queue-family] the device's graphics+compute family "
                        "offers one queue: no second queue to hand Tandem";
    }
    EngineDevice device(physical(), "", EngineQueues{2, 1, false});
    auto runtime = embed(device, "auto");
    // The engine submits to its queue 0 all along, with no lock Tandem knows of.
    VkQueue engine_queue = VK_NULL_HANDLE;
    vkGetDeviceQueue(device.handle(), device.family(), 0, &engine_queue);
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> engine_submits{0};
    std::thread engine([&] {
        while (!stop.load()) {
            VkSubmitInfo2 empty{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
            EXPECT_EQ(vkQueueSubmit2(engine_queue, 1, &empty, VK_NULL_HANDLE), VK_SUCCESS);
            engine_submits.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    expect_runs_on_primary_and_worker(*runtime);
    stop.store(true);
    engine.join();
    EXPECT_GT(engine_submits.load(), 0u);
    runtime.reset();
    EXPECT_EQ(vkQueueWaitIdle(engine_queue), VK_SUCCESS);
}

// Each required feature left out of the engine's device.
class RequiredFeatureTest : public EmbeddingTest,
                            public ::testing::WithParamInterface<std::string> {};

TEST_P(RequiredFeatureTest, ADeviceWithoutItIsRefusedWithItsName) {
    EngineDevice device(physical(), GetParam());
    try {
        (void)embed(device, "auto");
        ADD_FAILURE() << "a device without " << GetParam() << " was embedded";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.result(), VK_ERROR_FEATURE_NOT_PRESENT) << what;
        EXPECT_NE(what.find(GetParam() + " ("), std::string::npos) << what;
        EXPECT_NE(what.find("is not enabled"), std::string::npos) << what;
        EXPECT_NE(what.find("embedding_requirements"), std::string::npos) << what;
        // Only the one left out is named.
        for (const char* other :
             {"timelineSemaphore", "synchronization2", "dynamicRendering", "maintenance4"}) {
            if (GetParam() != other) {
                EXPECT_EQ(what.find(other), std::string::npos) << what;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Embedding, RequiredFeatureTest,
                         ::testing::Values("timelineSemaphore", "synchronization2",
                                           "dynamicRendering", "maintenance4"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             return param.param;
                         });

TEST_F(EmbeddingTest, ADeviceBelowVulkan13IsRefusedWithTheVersion) {
    // No driver here is older than 1.3: the check is given the version a 1.2 device reports.
    const std::vector<std::string> extensions;
    try {
        detail::check_embedded_device(adapters().at(0).info, VK_API_VERSION_1_2, extensions,
                                      detail::required_features());
        ADD_FAILURE() << "a Vulkan 1.2 device passed";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("is Vulkan 1.2"), std::string::npos) << what;
        EXPECT_NE(what.find("requires Vulkan 1.3"), std::string::npos) << what;
    }
    EXPECT_NO_THROW(detail::check_embedded_device(adapters().at(0).info, VK_API_VERSION_1_3,
                                                  extensions, detail::required_features()));
}

// Each optional extension or feature left out of the engine's device.
class OptionalItemTest : public EmbeddingTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(OptionalItemTest, ADeviceWithoutItRunsWorkerTasksWithoutTryingWhatItRulesOut) {
    const std::string& left_out = GetParam();
    const DeviceInfo& driver = adapters().at(0).info;
    const bool driver_has = left_out == "hostQueryReset" ? driver.features.host_query_reset
                                                         : detail::has_extension(driver, left_out);
    EngineDevice device(physical(), left_out);
    auto runtime = embed(device, "auto");
    ASSERT_EQ(runtime->worker_devices().size(), 1u);
    const DeviceInfo& primary = runtime->primary_device();

    // The device information says it once, with what it rules out, where the driver has it.
    ASSERT_EQ(primary.not_enabled.size(), driver_has ? 1u : 0u);
    if (driver_has) {
        EXPECT_EQ(primary.not_enabled[0].name, left_out);
        EXPECT_FALSE(primary.not_enabled[0].rules_out.empty());
    }
    // The worker was opened by the runtime: everything its driver has.
    EXPECT_TRUE(runtime->worker_devices()[0].not_enabled.empty());

    // The pair information: the paths it rules out are unavailable and say why.
    const PairInfo pair = runtime_pair(*runtime);
    const std::string not_enabled = left_out + " is not enabled on the primary";
    auto expect_ruled_out = [&](TransferPath path) {
        for (const PathAvailability& a : pair.paths) {
            if (a.path == path) {
                EXPECT_FALSE(a.available) << to_string(path) << ": " << a.reason;
                if (driver_has) {
                    EXPECT_NE(a.reason.find(not_enabled), std::string::npos)
                        << to_string(path) << ": " << a.reason;
                }
            }
        }
    };
    if (left_out == VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) {
        EXPECT_FALSE(primary.features.external_memory_fd);
        EXPECT_FALSE(primary.features.external_memory_fd_image);
        expect_ruled_out(TransferPath::ZeroCopy);
        expect_ruled_out(TransferPath::SharedMemory);
        expect_ruled_out(TransferPath::CudaPeer);
    } else if (left_out == VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) {
        EXPECT_FALSE(primary.features.external_memory_host);
        expect_ruled_out(TransferPath::HostImported);
    } else if (left_out == VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) {
        // No path needs it: it rules out GPU-side synchronisation, which the pair says.
        EXPECT_FALSE(primary.features.external_semaphore_fd_timeline);
        EXPECT_FALSE(pair.gpu_side_sync) << pair.sync_reason;
        if (driver_has) {
            EXPECT_NE(pair.sync_reason.find(not_enabled), std::string::npos) << pair.sync_reason;
        }
    } else if (left_out == "hostQueryReset") {
        EXPECT_FALSE(primary.features.host_query_reset);
    }
    // A reason names it only where the device was created without it.
    if (!driver_has) {
        EXPECT_EQ(pair.sync_reason.find("is not enabled"), std::string::npos);
        for (const PathAvailability& a : pair.paths) {
            EXPECT_EQ(a.reason.find("is not enabled"), std::string::npos) << a.reason;
        }
    }

    // A task on the worker takes the pair's best path; none failed its self-test or was dropped.
    const TaskStats stats = run_pattern(*runtime, "worker:0");
    EXPECT_TRUE(stats.dropped_paths.empty())
        << stats.dropped_paths.front().path << ": " << stats.dropped_paths.front().reason;
    ASSERT_TRUE(pair.best_path());
    EXPECT_EQ(stats.transfer_path, pair.best_path());
}

INSTANTIATE_TEST_SUITE_P(Embedding, OptionalItemTest,
                         ::testing::Values(std::string(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME),
                                           std::string(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME),
                                           std::string(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME),
                                           std::string(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME),
                                           std::string(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME),
                                           std::string("hostQueryReset")),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             std::string name = param.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

} // namespace
} // namespace tandem::test
