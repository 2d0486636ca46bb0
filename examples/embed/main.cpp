// tandem-embed: how an engine embeds Tandem. It creates its own Vulkan instance and device the
// way an engine would, from what tandem::embedding_requirements() asks for, hands them to Tandem,
// runs its own workload (EngineFill: the image cleared to a colour the engine submits with each
// job) as a task on a worker, and each frame acquires the newest output, reads it back on its
// Tandem's queue (tandem::LeaseReadback, under that queue's lock), checks one texel
// against the colour it submitted for that generation, and releases the lease. On a worker it
// also leases each output where the worker wrote it (Runtime::acquire_on_worker) and checks the
// same texel there, read on the worker's queue; and runs the same workload as a second task
// that keeps its outputs on the worker (TaskDesc::keep_output_on_worker: nothing crosses to the
// primary), checked there alone.
//
// Exit code 0 when at least 10 distinct generations were sampled (on the worker too, when the
// task runs on one, and of the second task) and every sample matched.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>
#include <vulkan/vulkan.h>

namespace {

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed: " + tandem::to_string(r));
    }
}

// The engine's own work for the task, through tandem/workload.hpp: Tandem makes one per device
// the task runs on and has it record each job into the slot's image. Here: clear the image to
// the RGBA8 colour the engine submitted (4 bytes).
class EngineFill final : public tandem::Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    tandem::WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const tandem::RecordContext& job) override {
        if (job.bytes.size() != 4) {
            throw std::invalid_argument("EngineFill wants 4 bytes of colour");
        }
        VkImageMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        barrier.dstStageMask = VK_PIPELINE_STAGE_2_CLEAR_BIT;
        barrier.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED; // the old contents are not needed
        barrier.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.image = job.image;
        barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &barrier;
        vkCmdPipelineBarrier2(job.cmd, &dep);
        VkClearColorValue colour{};
        for (int c = 0; c < 4; ++c) {
            colour.float32[c] = static_cast<float>(std::to_integer<int>(job.bytes[c])) / 255.0f;
        }
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour, 1,
                             &range);
    }
};

// The engine's own objects, created the way an engine takes on Tandem's requirements
// (tandem/embedding.hpp): the instance's version and extensions, then the device's extensions and
// features merged into the engine's own create info, and EmbedInfo told what that enabled.
struct Engine {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t family = 0;
    VkQueue queue = VK_NULL_HANDLE;
    bool tandem_has_own_queue = false; // queue index 1 of `family` is Tandem's alone
    tandem::EmbedInfo embed;           // what Tandem is handed
    std::uint32_t physical_count = 0;  // the GPUs (and CPU devices) the instance lists

    Engine() {
        const tandem::EmbeddingRequirements for_instance = tandem::embedding_requirements();
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "tandem-embed";
        // The engine's own version, raised to Tandem's where that is higher.
        app.apiVersion = std::max<std::uint32_t>(VK_API_VERSION_1_2, for_instance.api_version);
        const std::vector<const char*> instance_extensions =
            for_instance.instance_extension_names();
        VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        ii.pApplicationInfo = &app;
        ii.enabledExtensionCount = static_cast<std::uint32_t>(instance_extensions.size());
        ii.ppEnabledExtensionNames = instance_extensions.data();
        check(vkCreateInstance(&ii, nullptr, &instance), "vkCreateInstance");
        std::uint32_t count = 0;
        vkEnumeratePhysicalDevices(instance, &count, nullptr);
        if (count == 0) {
            throw std::runtime_error("no Vulkan device");
        }
        std::vector<VkPhysicalDevice> devices(count);
        vkEnumeratePhysicalDevices(instance, &count, devices.data());
        physical = devices[0];
        physical_count = count;

        // What Tandem needs of this device, and what each optional item unlocks.
        const tandem::EmbeddingRequirements need = tandem::embedding_requirements(physical);
        if (!need.satisfied()) {
            throw std::runtime_error("this device cannot embed Tandem: " + need.missing());
        }
        for (const tandem::Requirement& e : need.device_extensions) {
            std::printf("tandem-embed: %s %s: %s\n", e.name.c_str(),
                        e.supported ? "enabled" : "absent", e.unlocks.c_str());
        }

        std::uint32_t qcount = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &qcount, nullptr);
        std::vector<VkQueueFamilyProperties> families(qcount);
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &qcount, families.data());
        for (std::uint32_t i = 0; i < qcount; ++i) {
            if ((families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
                (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
                family = i;
                break;
            }
        }
        // The engine's own extensions and features (none here) with Tandem's merged in.
        std::vector<const char*> extensions = need.device_extension_names();
        VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
        VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        f12.pNext = &f13;
        need.merge_features(f12, f13);
        // A queue of Tandem's own beside the engine's where the family has two (need.queues[1]):
        // then no lock is shared. Otherwise Tandem shares the engine's queue under a mutex.
        for (const tandem::QueueFamilyOffer& offer : need.queues.at(1).families) {
            tandem_has_own_queue =
                tandem_has_own_queue || (offer.family == family && offer.queue_count >= 2);
        }
        const float priorities[2] = {1.0f, 1.0f};
        VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        qi.queueFamilyIndex = family;
        qi.queueCount = tandem_has_own_queue ? 2 : 1;
        qi.pQueuePriorities = priorities;
        VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        di.pNext = &f12;
        di.queueCreateInfoCount = 1;
        di.pQueueCreateInfos = &qi;
        di.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
        di.ppEnabledExtensionNames = extensions.data();
        check(vkCreateDevice(physical, &di, nullptr, &device), "vkCreateDevice");
        vkGetDeviceQueue(device, family, 0, &queue);

        embed.instance = instance;
        embed.physical_device = physical;
        embed.device = device;
        embed.queue_family = family;
        embed.queue_index = tandem_has_own_queue ? 1 : 0;
        embed.set_enabled(di); // the extensions and features the device was created with
        embed.debug_utils =
            std::any_of(instance_extensions.begin(), instance_extensions.end(), [](const char* e) {
                return std::strcmp(e, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
            });
    }
    ~Engine() {
        vkDeviceWaitIdle(device);
        vkDestroyDevice(device, nullptr);
        vkDestroyInstance(instance, nullptr);
    }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
};

} // namespace

int main() try {
    Engine engine;
    // Sharing its only queue with Tandem, the engine locks this around its own submits,
    // presents and waits on it, as Tandem does around its submits (tandem/embedding.hpp).
    auto queue_mutex = std::make_shared<std::mutex>();

    tandem::EmbedInfo embed = engine.embed;
    if (!engine.tandem_has_own_queue) {
        embed.queue_mutex = queue_mutex;
    }
    std::printf("tandem-embed: Tandem %s\n", engine.tandem_has_own_queue
                                                 ? "has a queue of its own"
                                                 : "shares the engine's queue under a mutex");

    int status = 0;
    {
        // Embedded, Tandem's workers are the instance's other GPUs. On a machine with one device
        // the example asks for a second opening of the engine's own, so that its task still
        // crosses two devices (RuntimeOptions::virtual_devices).
        tandem::RuntimeOptions options;
        options.virtual_devices = engine.physical_count == 1 ? 2 : 0;
        tandem::Runtime runtime(embed, options);
        tandem::TaskDesc desc;
        desc.name = "engine-fill";
        desc.width = 128;
        desc.height = 128;
        desc.factory = [](const tandem::WorkerContext&) { return std::make_unique<EngineFill>(); };
        desc.placement = runtime.worker_devices().empty() ? tandem::Placement::on_primary()
                                                          : tandem::Placement::on_worker(0);
        tandem::TaskId task;
        try {
            task = runtime.register_task(desc);
        } catch (const tandem::Error& e) {
            // A build without a cross-device path for this pair: run on the engine's device.
            std::printf("tandem-embed: no worker placement (%s); using the primary\n", e.what());
            desc.placement = tandem::Placement::on_primary();
            task = runtime.register_task(desc);
        }
        std::printf("tandem-embed: engine-fill task on %s (adapter %u) via %s\n",
                    runtime.stats(task).device_name.c_str(), runtime.stats(task).device,
                    tandem::transfer_path_name(runtime.stats(task)).c_str());

        // The engine's check of each output: one batch on Tandem's queue (under its lock, the
        // engine's mutex when shared) that waits for the lease and copies its image to host
        // memory.
        tandem::LeaseReadback readback(runtime);
        // The same outputs where the worker wrote them, read on the worker's own queue.
        const std::uint32_t device = runtime.stats(task).device;
        const bool on_worker = device != runtime.primary_device().index;
        std::unique_ptr<tandem::LeaseReadback> worker_readback;
        if (on_worker) {
            worker_readback = std::make_unique<tandem::LeaseReadback>(runtime, device);
        }
        std::set<std::uint64_t> sampled;
        std::set<std::uint64_t> sampled_on_worker;
        std::map<std::uint64_t, std::uint32_t> submitted; // generation -> packed RGBA8 colour
        std::uint32_t submits = 0;
        int mismatches = 0;
        // Each frame: the next colour to `to`, noted under the generation it makes (Busy is
        // fine: the next frame tries again).
        const auto submit_next = [&](tandem::TaskId to) {
            ++submits;
            const std::byte colour[4] = {static_cast<std::byte>(submits * 37 & 0xFF),
                                         static_cast<std::byte>(submits * 11 & 0xFF),
                                         std::byte{0x5A}, std::byte{0xFF}};
            const tandem::SubmitResult r = runtime.submit(to, colour);
            if (r.accepted()) {
                std::uint32_t packed = 0;
                std::memcpy(&packed, colour, 4);
                submitted[r.generation] = packed;
            } else if (r.status == tandem::SubmitStatus::Failed) {
                throw std::runtime_error("submit failed: " + r.reason);
            }
        };
        // A lease on the worker read there, one texel checked against the colour submitted for
        // its generation, and released with 0 likewise (read() waited for it); a real engine's
        // pass there signals the worker's reads timeline (DeviceVulkan::reads_timeline) instead.
        const auto check_on_worker = [&](const tandem::Lease& there, const char* what) {
            const std::uint32_t seen = worker_readback->read(there).texel(17 % there.extent.width,
                                                                          5 % there.extent.height);
            runtime.release(there, 0);
            if (seen != submitted.at(there.generation)) {
                ++mismatches;
                std::fprintf(stderr, "%s generation %llu: texel %08x\n", what,
                             static_cast<unsigned long long>(there.generation), seen);
            }
        };
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while ((sampled.size() < 10 || (on_worker && sampled_on_worker.size() < 10)) &&
               std::chrono::steady_clock::now() < deadline) {
            submit_next(task);
            runtime.pump();
            auto lease = runtime.acquire(task);
            if (!lease) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            // Read the output back and check it. read() waits for its copy, so the lease goes
            // back with 0 (nothing pending). A real engine samples leases in its frame instead,
            // waiting on lease->wait_semaphore and releasing with the value at which its frame
            // signals Tandem's primary timeline (tandem/lease.hpp).
            const std::uint32_t x = 17 % lease->extent.width;
            const std::uint32_t y = 5 % lease->extent.height;
            const tandem::ReadbackImage image = readback.read(*lease);
            runtime.release(*lease, 0);
            const std::uint32_t texel = image.texel(x, y);
            const std::uint32_t expected = submitted.at(lease->generation);
            if (texel != expected) {
                ++mismatches;
                std::fprintf(stderr, "generation %llu: texel %08x, expected %08x\n",
                             static_cast<unsigned long long>(lease->generation), texel, expected);
            }
            sampled.insert(lease->generation);
            if (worker_readback) {
                auto there = runtime.acquire_on_worker(task);
                if (there && there->on_worker) {
                    check_on_worker(*there, "on the worker:");
                    sampled_on_worker.insert(there->generation);
                }
            }
        }
        const tandem::TaskStats stats = runtime.stats(task);
        std::printf("tandem-embed: sampled %zu generations (newest %llu), %zu on the worker, "
                    "%d mismatches, %llu accepted, %llu busy\n",
                    sampled.size(), static_cast<unsigned long long>(stats.newest_generation),
                    sampled_on_worker.size(), mismatches,
                    static_cast<unsigned long long>(stats.accepted),
                    static_cast<unsigned long long>(stats.busy));
        const bool worker_sampled = !on_worker || sampled_on_worker.size() >= 10;

        // The same work kept on the worker: its outputs never reach the primary, and are leased
        // and checked there alone.
        std::size_t kept_sampled = 0;
        if (on_worker) {
            desc.name = "engine-fill-kept";
            desc.keep_output_on_worker = true;
            desc.placement = tandem::Placement::on_worker(0);
            const tandem::TaskId kept = runtime.register_task(desc);
            std::set<std::uint64_t> seen_kept;
            submitted.clear();
            const auto kept_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (seen_kept.size() < 10 && std::chrono::steady_clock::now() < kept_deadline) {
                submit_next(kept);
                runtime.pump();
                if (runtime.acquire(kept).error != tandem::TaskError::BadArgument) {
                    ++mismatches; // acquire() must say where the outputs are
                }
                auto there = runtime.acquire_on_worker(kept);
                if (!there) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    continue;
                }
                check_on_worker(*there, "kept on the worker:");
                seen_kept.insert(there->generation);
            }
            kept_sampled = seen_kept.size();
            std::printf("tandem-embed: kept on the worker: sampled %zu generations there, "
                        "outputs kept %s\n",
                        kept_sampled, runtime.stats(kept).outputs_kept_on_worker ? "yes" : "no");
            if (!runtime.stats(kept).outputs_kept_on_worker) {
                ++mismatches;
            }
            runtime.unregister_task(kept);
        }
        const bool kept_ok = !on_worker || kept_sampled >= 10;
        status = (sampled.size() >= 10 && worker_sampled && kept_ok && mismatches == 0) ? 0 : 1;
    } // the readbacks, then the runtime, go before the engine's device and instance
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-embed: %s\n", e.what());
    return 1;
}
