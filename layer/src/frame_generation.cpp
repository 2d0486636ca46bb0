#include "frame_generation.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "tandem/compute.hpp"
#include "tandem/error.hpp"
#include "tandem/post.hpp"

#include "layer_log.hpp"
#include "layer_settings.hpp"
#include "layer_state.hpp"
#include "submission.hpp"

namespace tandem::layer {
namespace {

// Counts Tandem's own vkCreateDevice calls on the program's instance while the runtime opens its
// worker, so that the layer's vkCreateDevice leaves those devices alone.
class OpeningWorkers {
public:
    explicit OpeningWorkers(const InstanceRecord& instance) : m_instance(instance) {
        m_instance.tandem_opening.fetch_add(1);
    }
    ~OpeningWorkers() { m_instance.tandem_opening.fetch_sub(1); }
    OpeningWorkers(const OpeningWorkers&) = delete;
    OpeningWorkers& operator=(const OpeningWorkers&) = delete;

private:
    const InstanceRecord& m_instance;
};

std::uint32_t physical_device_count(const InstanceRecord& instance) {
    std::uint32_t count = 0;
    if (instance.dispatch.EnumeratePhysicalDevices == nullptr ||
        instance.dispatch.EnumeratePhysicalDevices(instance.instance, &count, nullptr) !=
            VK_SUCCESS) {
        return 0;
    }
    return count;
}

// The program's handle of the physical device the layer knows by its own: the loader hands
// layers unwrapped physical devices, while Tandem, a client of the loader, enumerates the
// program's. The same device has the same UUID and name on both sides.
VkPhysicalDevice program_physical_device(const InstanceRecord& instance,
                                         VkPhysicalDevice layer_physical) {
    auto identity = [](auto get_properties2, VkPhysicalDevice physical) {
        VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        properties.pNext = &id;
        get_properties2(physical, &properties);
        return std::string(properties.properties.deviceName) +
               std::string(reinterpret_cast<const char*>(id.deviceUUID), VK_UUID_SIZE);
    };
    if (instance.dispatch.GetPhysicalDeviceProperties2 == nullptr) {
        throw std::runtime_error("the instance lacks vkGetPhysicalDeviceProperties2");
    }
    const std::string wanted =
        identity(instance.dispatch.GetPhysicalDeviceProperties2, layer_physical);
    std::uint32_t count = 0;
    std::vector<VkPhysicalDevice> devices;
    if (vkEnumeratePhysicalDevices(instance.instance, &count, nullptr) == VK_SUCCESS) {
        devices.resize(count);
        if (vkEnumeratePhysicalDevices(instance.instance, &count, devices.data()) != VK_SUCCESS) {
            devices.clear();
        }
    }
    for (const VkPhysicalDevice device : devices) {
        if (identity(vkGetPhysicalDeviceProperties2, device) == wanted) {
            return device;
        }
    }
    throw std::runtime_error("the program's physical device is not among its instance's");
}

// A queue family's timestamps: valid bits (0: none) and ns per tick.
void queue_timestamps(const InstanceDispatch& instance, VkPhysicalDevice physical,
                      std::uint32_t family, std::uint32_t& bits, double& ns) {
    if (instance.GetPhysicalDeviceProperties == nullptr) {
        return;
    }
    const std::vector<VkQueueFamilyProperties> families = queue_families(instance, physical);
    if (family < families.size()) {
        VkPhysicalDeviceProperties properties{};
        instance.GetPhysicalDeviceProperties(physical, &properties);
        bits = families[family].timestampValidBits;
        ns = static_cast<double>(properties.limits.timestampPeriod);
    }
}

// Scaling's upscale: clamped Lanczos-3 without sharpening, the closest of the upscaler's settings
// to a frame drawn at the window's size (docs/layer.md, "Scaling").
constexpr UpscaleSettings k_scaling_upscale{0.0f, 0.5f};

// shaders/pass_frame.comp, compiled at build time (glslc -mfmt=c).
constexpr std::uint32_t k_pass_frame_spirv[] =
#include "pass_frame.comp.inc"
    ;

// How long the presenter waits for a swapchain image for a real frame the worker upscaled.
constexpr std::uint64_t k_real_image_wait_ns = 100'000'000;

bool presented(VkResult result) {
    return result == VK_SUCCESS || result == VK_SUBOPTIMAL_KHR;
}

// Microseconds from `from` to now (steady clock).
double micros_since(std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - from)
        .count();
}

} // namespace

DeviceGeneration::DeviceGeneration(const DeviceRecord& device, VkQueue queue,
                                   std::uint32_t queue_family, std::uint32_t queue_index,
                                   std::shared_ptr<std::mutex> queue_mutex,
                                   std::optional<std::uint32_t> tandem_queue)
    : m_own_queue(tandem_queue.has_value()), m_device(device.device), m_queue(queue),
      m_queue_family(queue_family), m_queue_mutex(std::move(queue_mutex)),
      m_dispatch(device.dispatch), m_instance(device.instance) {
    const InstanceRecord& instance = *device.instance;
    EmbedInfo embed;
    embed.instance = instance.instance;
    embed.physical_device = program_physical_device(instance, device.physical_device);
    embed.device = device.device;
    embed.queue_family = queue_family;
    // Tandem's own queue needs no lock shared with the program (its lock is its own).
    embed.queue_index = tandem_queue.value_or(queue_index);
    embed.queue_mutex = m_own_queue ? nullptr : m_queue_mutex;
    embed.enabled_extensions = device.enabled_extensions;
    embed.enabled_features = device.enabled_features;
    embed.get_instance_proc_addr = instance.dispatch.GetInstanceProcAddr;
    embed.get_device_proc_addr = device.dispatch.GetDeviceProcAddr;

    RuntimeOptions options;
    options.workers = layer_settings().worker;
    options.embedded_cpu_workers = true;
    options.input_copies =
        layer_settings().copies == "compute"   ? RuntimeOptions::InputCopies::Compute
        : layer_settings().copies == "command" ? RuntimeOptions::InputCopies::CopyCommand
                                               : RuntimeOptions::InputCopies::Auto;
    // One device alone (one GPU, or lavapipe on a machine without one): its second opening is
    // the worker, as `tandem run` does standalone.
    options.virtual_devices = physical_device_count(instance) == 1 ? 2 : 1;
    options.name_objects = false;
    options.log_level = LogLevel::Warn;
    options.log = [](LogLevel, std::string_view category, std::string_view message) {
        log_problem("tandem " + std::string(category) + ": " + std::string(message));
    };
    const OpeningWorkers opening(instance);
    m_runtime = std::make_unique<Runtime>(embed, options);
    const std::vector<DeviceInfo> workers = m_runtime->worker_devices();
    if (workers.empty()) {
        m_runtime.reset();
        throw std::runtime_error("no worker device (TANDEM_FRAMEGEN_WORKER='" +
                                 layer_settings().worker + "')");
    }
    m_worker_name = workers.front().name;
    DisplayQueue::Desc display;
    display.device = m_device;
    display.vk = &m_dispatch;
    display.queue = m_queue;
    display.queue_family = m_queue_family;
    display.queue_mutex = m_queue_mutex;
    if (instance.dispatch.GetPhysicalDeviceMemoryProperties != nullptr) {
        instance.dispatch.GetPhysicalDeviceMemoryProperties(device.physical_device,
                                                            &display.memory);
    }
    queue_timestamps(instance.dispatch, device.physical_device, queue_family,
                     display.timestamp_bits, display.timestamp_ns);
    display.reads_timeline = m_runtime->primary_timeline();
    m_display = std::make_unique<DisplayQueue>(display);
}

DeviceGeneration::~DeviceGeneration() {
    // The worker's display first: its objects live on the worker's device, which the runtime
    // closes.
    {
        const std::lock_guard lock(m_worker_display_mutex);
        m_worker_display.reset();
    }
    m_runtime.reset();
}

DisplayQueue* DeviceGeneration::worker_display(VkSurfaceKHR surface, std::string& why) {
    const std::lock_guard lock(m_worker_display_mutex);
    const std::vector<DeviceInfo> workers = m_runtime->worker_devices();
    const std::optional<DeviceVulkan> worker =
        workers.empty() ? std::nullopt : m_runtime->device_vulkan(workers.front().index);
    const std::shared_ptr<DeviceRecord> record =
        worker ? registry().find_device(worker->device) : nullptr;
    if (!worker || record == nullptr || worker->device == m_device) {
        why = "the runtime has no worker device of its own";
        return nullptr;
    }
    if (!record->swapchain_added || record->dispatch.CreateSwapchainKHR == nullptr) {
        why = "the worker's device has no VK_KHR_swapchain (its driver does not offer it, or the "
              "program's instance has no VK_KHR_surface)";
        return nullptr;
    }
    const InstanceDispatch& instance = m_instance->dispatch;
    VkBool32 supported = VK_FALSE;
    if (instance.GetPhysicalDeviceSurfaceSupportKHR == nullptr ||
        instance.GetPhysicalDeviceSurfaceSupportKHR(record->physical_device, worker->queue_family,
                                                    surface, &supported) != VK_SUCCESS ||
        supported != VK_TRUE) {
        why = "the worker's queue cannot present to the program's surface";
        return nullptr;
    }
    if (m_worker_display) {
        return m_worker_display.get();
    }
    DisplayQueue::Desc desc;
    desc.device = worker->device;
    desc.vk = &record->dispatch;
    desc.queue = worker->queue;
    desc.queue_family = worker->queue_family;
    desc.queue_mutex = worker->queue_mutex;
    desc.on_worker = true;
    desc.reads_timeline = worker->reads_timeline;
    if (instance.GetPhysicalDeviceMemoryProperties != nullptr) {
        instance.GetPhysicalDeviceMemoryProperties(record->physical_device, &desc.memory);
    }
    queue_timestamps(instance, record->physical_device, worker->queue_family, desc.timestamp_bits,
                     desc.timestamp_ns);
    m_worker_record = record;
    m_worker_display = std::make_unique<DisplayQueue>(desc);
    return m_worker_display.get();
}

std::shared_ptr<DeviceRecord> DeviceGeneration::worker_record() const {
    const std::lock_guard lock(m_worker_display_mutex);
    return m_worker_record;
}

bool worker_takes_format(VkFormat format) noexcept {
    constexpr std::array k_formats{VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_B8G8R8A8_SRGB,
                                   VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R8G8B8A8_SRGB};
    return std::find(k_formats.begin(), k_formats.end(), format) != k_formats.end();
}

SwapchainGeneration::SwapchainGeneration(
    DeviceGeneration& device, VkSwapchainKHR swapchain, VkFormat format, VkExtent2D extent,
    int multiplier, GenerationCounts& counts, std::atomic<std::uint64_t>& real_presented,
    VkPresentModeKHR present_mode, KeptTasks kept, std::shared_ptr<ScaledSwapchain> scaled,
    bool rgba8_readable, bool rgba8_writable, DisplayQueue* display)
    : m_device(device), m_display(display != nullptr ? *display : device.program_display()),
      m_vk(m_display.vk()), m_swapchain(swapchain), m_multiplier(multiplier),
      m_pace(present_mode == VK_PRESENT_MODE_MAILBOX_KHR ||
             present_mode == VK_PRESENT_MODE_IMMEDIATE_KHR),
      m_format(format), m_program_sampled(rgba8_readable && (!scaled || m_display.on_worker())),
      m_extent(extent), m_counts(counts), m_scaled(std::move(scaled)),
      m_real_presented(real_presented) {
    if (!worker_takes_format(format)) {
        throw std::runtime_error("the swapchain's format (" + std::to_string(format) +
                                 ") is not an 8-bit RGBA or BGRA one");
    }
    std::uint32_t count = 0;
    if (m_vk.GetSwapchainImagesKHR(m_display.device(), swapchain, &count, nullptr) != VK_SUCCESS) {
        throw std::runtime_error("vkGetSwapchainImagesKHR failed");
    }
    m_images.resize(count);
    if (m_vk.GetSwapchainImagesKHR(m_display.device(), swapchain, &count, m_images.data()) !=
        VK_SUCCESS) {
        throw std::runtime_error("vkGetSwapchainImagesKHR failed");
    }
    if (m_scaled) {
        const auto images = m_scaled->program_images();
        m_program_images.assign(images.begin(), images.end());
    } else {
        m_program_images = m_images;
    }
    try {
        m_ready = make_program_semaphore(VK_SEMAPHORE_TYPE_TIMELINE);
        m_done = make_semaphore(VK_SEMAPHORE_TYPE_TIMELINE);
        for (std::uint32_t i = 0; i < count; ++i) {
            m_generated_ready.push_back(make_semaphore(VK_SEMAPHORE_TYPE_BINARY));
        }
        for (std::size_t i = 0; i < m_program_images.size() && !m_scaled; ++i) {
            m_real_ready.push_back(make_semaphore(VK_SEMAPHORE_TYPE_BINARY));
        }
        m_pool = create_command_pool(m_vk, m_display.device(), m_display.queue_family());
        // A slot per image the generated frames may use at once, and one more.
        m_slots.resize(count + 1);
        const std::vector<VkCommandBuffer> cmds =
            allocate_command_buffers(m_vk, m_display.device(), m_pool, count + 1);
        for (std::size_t i = 0; i < m_slots.size(); ++i) {
            m_slots[i].cmd = cmds[i];
            m_slots[i].acquired = make_semaphore(VK_SEMAPHORE_TYPE_BINARY);
        }
        make_copy_timer();
        for (std::size_t i = 0; i < m_program_images.size() && m_program_sampled; ++i) {
            const VkImageView made = rgba8_view(m_device.dispatch(), m_device.device(),
                                                m_program_images[i], VK_IMAGE_USAGE_SAMPLED_BIT);
            if (made == VK_NULL_HANDLE) {
                throw std::runtime_error("vkCreateImageView of a swapchain image failed");
            }
            m_program_views.push_back(made);
        }
        if (rgba8_writable && (!m_scaled || m_display.on_worker())) {
            try {
                m_frame_copy = std::make_unique<FrameCopy>(
                    m_vk, m_display.device(), m_display.frame_copy_pipeline(), m_images, m_extent,
                    static_cast<std::uint32_t>(m_slots.size()));
            } catch (const std::exception& e) {
                log_problem(std::string("the worker's frames are copied into the swapchain by "
                                        "the copy command: the compute copy could not be made (") +
                            e.what() + ")");
            }
        }
        // On the worker's display the real frame's task comes first: the frame tasks read its
        // output there (a chain, in place), so that each frame is copied on the program's
        // device once.
        if (m_display.on_worker()) {
            m_upscale = kept.upscale ? kept.upscale
                                     : m_device.runtime().register_task_async(real_frame_desc());
            m_real_upscale = kept.real_upscale;
            if (!m_real_upscale && upscales_frames()) {
                m_real_upscale = m_device.runtime().register_task_async(
                    upscale_desc("tandem-layer upscale", m_upscale));
            }
        }
        // Kept from the swapchain this one replaced: each has made frames, so at the same size
        // the next job's frame is a generated one (m_jobs 1); at another size each is reshaped.
        m_tasks = std::move(kept.tasks);
        m_jobs.assign(m_tasks.size(), 1);
        m_reshaped_at.assign(m_tasks.size(), 0);
        if (kept.extent.width != extent.width || kept.extent.height != extent.height) {
            for (std::size_t k = 0; k < m_tasks.size(); ++k) {
                reshape(k);
            }
        }
        for (std::size_t k = m_tasks.size(); k + 1 < static_cast<std::size_t>(m_multiplier); ++k) {
            m_tasks.push_back(m_device.runtime().register_task_async(frame_task(k)));
            m_jobs.push_back(0);
            m_reshaped_at.push_back(0);
        }
        if (upscales_frames()) {
            Runtime& runtime = m_device.runtime();
            m_frame_upscales = std::move(kept.frame_upscales);
            if (!m_display.on_worker()) {
                m_upscale = kept.upscale;
            }
            if (!m_upscale) {
                m_upscale = runtime.register_task_async(upscale_desc("tandem-layer upscale", {}));
            }
            for (std::size_t k = m_frame_upscales.size(); k < m_tasks.size(); ++k) {
                m_frame_upscales.push_back(runtime.register_task_async(upscale_desc(
                    "tandem-layer frame " + std::to_string(k + 1) + " upscale", m_tasks[k])));
            }
        }
        m_presenter = std::thread([this] { run_presenter(); });
    } catch (...) {
        release();
        throw;
    }
}

SwapchainGeneration::~SwapchainGeneration() {
    stop_presenter(false);
    wait_idle();
    release();
}

void SwapchainGeneration::wait_idle() {
    static_cast<void>(m_device.wait_idle());
    if (m_display.on_worker()) {
        static_cast<void>(m_display.wait_idle());
    }
}

void GenerationCounts::note_present() noexcept {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
    std::int64_t none = 0;
    first_present_ns.compare_exchange_strong(none, now);
    last_present_ns.store(now);
}

void GenerationCounts::note(SampleRing& ring, double us) {
    const std::lock_guard lock(summary_mutex);
    ring.add(us);
}

void SwapchainGeneration::make_copy_timer() {
    if (m_display.timestamp_bits() == 0 || m_vk.CreateQueryPool == nullptr) {
        return; // the queue has no timestamps: the copies go untimed
    }
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = static_cast<std::uint32_t>(2 * m_slots.size());
    if (m_vk.CreateQueryPool(m_display.device(), &info, nullptr, &m_copy_times) != VK_SUCCESS) {
        m_copy_times = VK_NULL_HANDLE;
        return;
    }
    m_timestamp_ns = m_display.timestamp_ns();
    const std::uint32_t bits = m_display.timestamp_bits();
    m_timestamp_mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

void SwapchainGeneration::note_copy_time(std::size_t slot) {
    if (m_copy_times == VK_NULL_HANDLE || !m_slots[slot].timed) {
        return;
    }
    m_slots[slot].timed = false;
    std::array<std::uint64_t, 2> ticks{};
    if (m_vk.GetQueryPoolResults(m_display.device(), m_copy_times,
                                 static_cast<std::uint32_t>(2 * slot), 2, sizeof(ticks),
                                 ticks.data(), sizeof(std::uint64_t),
                                 VK_QUERY_RESULT_64_BIT) != VK_SUCCESS) {
        return; // not available: the statistics miss one
    }
    const std::uint64_t elapsed = (ticks[1] - ticks[0]) & m_timestamp_mask;
    try {
        m_counts.note(m_counts.copies_us, static_cast<double>(elapsed) * m_timestamp_ns / 1000.0);
    } catch (...) {
        // Out of memory keeping a sample: the statistics miss one.
    }
}

void SwapchainGeneration::record_summary() noexcept {
    // Scaled, the upscale takes the program's frames: its figures are the input's and the pass's.
    const TaskId first = m_upscale ? m_upscale : (m_tasks.empty() ? TaskId{} : m_tasks.front());
    if (first) {
        try {
            const TaskStats stats = m_device.runtime().stats(first);
            GenerationSummary summary;
            summary.worker = m_device.worker_name();
            summary.transfer_path = stats.transfer_path ? to_string(*stats.transfer_path) : "";
            summary.input_path = stats.input_path;
            summary.jobs = stats.accepted;
            summary.pass_us_p50 = stats.gpu_us.p50_us;
            summary.input_copy_us_p50 = stats.input_copy_gpu_us.p50_us;
            summary.job_submitted_us_p50 = stats.worker_submit.p50_us;
            summary.job_done_us_p50 = stats.worker_done.p50_us;
            summary.job_ready_us_p50 = stats.ready_observed.p50_us;
            summary.input_copied_by_compute = stats.inputs_copied_by_compute > 0;
            summary.layer_copied_by_compute = m_frame_copy != nullptr;
            summary.display = m_display.on_worker() ? "worker" : "program";
            summary.tandem_queue = m_device.tandem_queue();
            // Every copy of the program's frames on its device, all tasks: one per frame on the
            // worker's display (the frame tasks read the real frame's task's output there).
            for (const TaskId task : m_tasks) {
                summary.input_copies += m_device.runtime().stats(task).input_copies;
            }
            if (m_upscale) {
                summary.input_copies += stats.input_copies;
            }
            const std::lock_guard lock(m_counts.summary_mutex);
            m_counts.summary = std::move(summary);
        } catch (const std::exception&) {
            // Out of memory for a report's figures: the report goes without them.
        }
    }
}

void SwapchainGeneration::record_compute_copy(VkCommandBuffer cmd, std::size_t slot,
                                              const Lease& lease, std::uint32_t target) const {
    // The lease is sampled where it is (SHADER_READ_ONLY_OPTIMAL or GENERAL), else moved there
    // and back; the swapchain image's contents before are discarded.
    const VkImageLayout read = lease.layout == VK_IMAGE_LAYOUT_GENERAL
                                   ? VK_IMAGE_LAYOUT_GENERAL
                                   : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    std::array<VkImageMemoryBarrier, 2> before{};
    std::array<VkImageMemoryBarrier, 2> after{};
    std::uint32_t count = 0;
    before[count] = layout_barrier(m_images[target], VK_IMAGE_LAYOUT_UNDEFINED,
                                   VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT);
    // ALL_COMMANDS: a dump's read of the image after it chains to it.
    after[count++] = layout_barrier(m_images[target], VK_IMAGE_LAYOUT_GENERAL,
                                    VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_ACCESS_SHADER_WRITE_BIT, 0);
    if (read != lease.layout) {
        before[count] =
            layout_barrier(lease.image, lease.layout, read, 0, VK_ACCESS_SHADER_READ_BIT);
        after[count++] =
            layout_barrier(lease.image, read, lease.layout, VK_ACCESS_SHADER_READ_BIT, 0);
    }
    m_vk.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr, 0, nullptr, count,
                            before.data());
    m_frame_copy->record(cmd, static_cast<std::uint32_t>(slot), lease.view, read, target);
    m_vk.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0, nullptr, count,
                            after.data());
}

void SwapchainGeneration::record_command_copy(VkCommandBuffer cmd, const Lease& lease,
                                              std::uint32_t target) const {
    const std::array before{
        layout_barrier(lease.image, lease.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, 0,
                       VK_ACCESS_TRANSFER_READ_BIT),
        layout_barrier(m_images[target], VK_IMAGE_LAYOUT_UNDEFINED,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT)};
    m_vk.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            0, 0, nullptr, 0, nullptr, static_cast<std::uint32_t>(before.size()),
                            before.data());
    VkImageCopy region{};
    region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.extent = {lease.extent.width, lease.extent.height, 1};
    m_vk.CmdCopyImage(cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_images[target],
                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    const std::array after{layout_barrier(lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                          lease.layout, VK_ACCESS_TRANSFER_READ_BIT, 0),
                           layout_barrier(m_images[target], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                          VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
                                          VK_ACCESS_TRANSFER_WRITE_BIT, 0)};
    // ALL_COMMANDS: a dump's read of the image after it chains to it.
    m_vk.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                            0, 0, nullptr, 0, nullptr, static_cast<std::uint32_t>(after.size()),
                            after.data());
}

void SwapchainGeneration::release() noexcept {
    record_summary();
    for (const TaskId task : m_frame_upscales) { // before the frame tasks they read
        static_cast<void>(m_device.runtime().unregister_task(task));
    }
    m_frame_upscales.clear();
    for (const TaskId task : m_tasks) {
        static_cast<void>(m_device.runtime().unregister_task(task));
    }
    m_tasks.clear();
    if (m_real_upscale) { // before the real frame's task it reads
        static_cast<void>(m_device.runtime().unregister_task(m_real_upscale));
        m_real_upscale = {};
    }
    if (m_upscale) {
        static_cast<void>(m_device.runtime().unregister_task(m_upscale));
        m_upscale = {};
    }
    for (auto* frame : {&m_checks.real, &m_checks.previous, &m_checks.truth, &m_checks.generated}) {
        frame->reset();
    }
    m_frame_copy.reset();
    for (const VkImageView view : m_program_views) {
        m_device.dispatch().DestroyImageView(m_device.device(), view, nullptr);
    }
    m_program_views.clear();
    if (m_pool != VK_NULL_HANDLE) {
        m_vk.DestroyCommandPool(m_display.device(), m_pool, nullptr);
        m_pool = VK_NULL_HANDLE;
    }
    if (m_copy_times != VK_NULL_HANDLE) {
        m_vk.DestroyQueryPool(m_display.device(), m_copy_times, nullptr);
        m_copy_times = VK_NULL_HANDLE;
    }
    for (const VkSemaphore semaphore : m_owned) {
        m_vk.DestroySemaphore(m_display.device(), semaphore, nullptr);
    }
    m_owned.clear();
    for (const VkSemaphore semaphore : m_program_owned) {
        m_device.dispatch().DestroySemaphore(m_device.device(), semaphore, nullptr);
    }
    m_program_owned.clear();
}

VkSemaphore SwapchainGeneration::make_semaphore(VkSemaphoreType type) {
    const VkSemaphore semaphore = create_semaphore(m_vk, m_display.device(), type);
    m_owned.push_back(semaphore);
    return semaphore;
}

VkSemaphore SwapchainGeneration::make_program_semaphore(VkSemaphoreType type) {
    const VkSemaphore semaphore = create_semaphore(m_device.dispatch(), m_device.device(), type);
    m_program_owned.push_back(semaphore);
    return semaphore;
}

VkResult SwapchainGeneration::present(const VkPresentInfoKHR& info) {
    const std::uint32_t image = info.pImageIndices[0];
    // 1. The program's wait semaphores (binary) become a value of the layer's timeline, which
    //    Tandem's copy of the image and the real frame's present wait for.
    const std::vector<VkSemaphoreSubmitInfo> waits = present_waits(info);
    const VkSemaphoreSubmitInfo ready_signal = semaphore_info(m_ready, ++m_ready_value);
    VkSubmitInfo2 batch{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    batch.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
    batch.pWaitSemaphoreInfos = waits.data();
    batch.signalSemaphoreInfoCount = 1;
    batch.pSignalSemaphoreInfos = &ready_signal;
    if (const VkResult r = m_device.submit(batch); r != VK_SUCCESS) {
        return r;
    }

    // 2. The image goes to each task: the frames between the last present and this one.
    Runtime& runtime = m_device.runtime();
    InputImage input{m_program_images[image], VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, m_ready,
                     m_ready_value};
    input.view = image < m_program_views.size() ? m_program_views[image] : VK_NULL_HANDLE;
    Held next;
    next.image = image;
    next.frame = m_frames++;
    next.presented = std::chrono::steady_clock::now();
    next.generations.assign(m_tasks.size(), 0);
    // Verify mode gives the worker every other frame: the ones between are the truth.
    next.held_back = layer_settings().verify && next.frame % 2 == 1;
    // Verify mode, and a present asked to wait for generated frames (TANDEM_FRAMEGEN_WAIT_MS),
    // wait for the tasks to be prepared: the one up to two minutes, the other up to that wait.
    if (layer_settings().verify && !next.held_back) {
        wait_until_prepared(std::chrono::seconds(120));
    } else if (m_display.on_worker()) {
        // Only the worker can show the frame: its tasks are waited for (once per swapchain,
        // a few milliseconds on a GPU), or its frames are not shown until they are prepared.
        wait_until_prepared(
            std::max<std::chrono::milliseconds>(layer_settings().wait, std::chrono::seconds(2)));
    } else if (layer_settings().wait.count() > 0) {
        wait_until_prepared(layer_settings().wait);
    }
    std::uint64_t inputs_released = 0;
    if (m_scaled && layer_settings().wait.count() > 0) {
        // The presenter shows the newest upscale the runtime has: asked to wait for every
        // frame, this frame's is submitted only once the frame before went out, so that it is
        // not the one the presenter finds for the frame before (which it would then upscale
        // itself).
        std::unique_lock lock(m_items_mutex);
        m_items_changed.wait(lock, [&] { return m_finished == m_queued; });
    } else if (m_display.on_worker() && !m_pace) {
        // The worker's display with FIFO paces the program as a display does: its frame goes
        // to the worker once the one before was shown (at once where the worker keeps up), so
        // that no real frame is superseded before it is shown. Up to 250 ms: a worker that
        // stopped does not stop the program.
        std::unique_lock lock(m_items_mutex);
        m_items_changed.wait_for(lock, std::chrono::milliseconds(250),
                                 [&] { return m_finished == m_queued; });
    }
    if (m_scaled && !m_worker_lost) {
        // The frame upscaled on the worker: the real frame, and what the frame tasks read.
        const auto bytes = m_display.on_worker() ? std::span<const std::byte>{}
                                                 : settings_bytes(k_scaling_upscale);
        SubmitResult r = runtime.submit(m_upscale, bytes, std::span(&input, 1));
        // On the worker's display with FIFO, a frame waits for the worker as it would for a
        // display: while the real frames' slots are all taken, up to 250 ms. (Mailbox and
        // immediate drop it instead, as those displays drop a frame a newer one replaces.)
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
        while (m_display.on_worker() && !m_pace && r.status == SubmitStatus::Busy &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            runtime.pump();
            r = runtime.submit(m_upscale, bytes, std::span(&input, 1));
        }
        if (r.accepted()) {
            next.upscaled = r.generation;
            inputs_released = r.inputs_released;
        } else {
            note_submit_failure(r);
        }
        if (r.accepted() && m_real_upscale) {
            // Scaled on the worker's display: the real frame shown is the upscale of its task's
            // output, read there in place.
            const SubmitResult up =
                runtime.submit(m_real_upscale, settings_bytes(k_scaling_upscale));
            next.upscaled = up.accepted() ? up.generation : 0;
        }
    }
    for (std::size_t k = 0; k < m_tasks.size() && !next.held_back && !m_worker_lost; ++k) {
        if (m_reshaped_at[k] != 0 && !takes_frames(k)) {
            continue; // its new size is being prepared: no frame generated before this one
        }
        if (m_display.on_worker() && runtime.progress(m_tasks[k]).in_flight > 0) {
            // The worker shows the real frames too, after its queued work: while it has not
            // made the last generated frame, it makes none for this one, so that the real
            // frames never wait behind generation. The next job only takes this frame in (its
            // frame would lie between two real frames not next to each other).
            m_jobs[k] = 0;
            continue;
        }
        InterpolateSettings settings;
        settings.t = static_cast<float>(k + 1) / static_cast<float>(m_multiplier);
        const SubmitResult r =
            m_display.on_worker()
                ? runtime.submit(m_tasks[k], settings_bytes(settings)) // reads the real frame's
                : runtime.submit(m_tasks[k], settings_bytes(settings), std::span(&input, 1));
        if (!r.accepted()) {
            note_submit_failure(r);
            continue; // Preparing or Busy: no frame generated before this one
        }
        inputs_released = std::max(inputs_released, r.inputs_released);
        // A task's first job has no frame before it: it gives its own colour.
        const bool generated = ++m_jobs[k] > 1;
        if (generated && !upscales_frames()) {
            next.generations[k] = r.generation;
        } else if (generated) {
            // Scaled, the frame shown is its upscale's, which reads it in place.
            const SubmitResult up =
                runtime.submit(m_frame_upscales[k], settings_bytes(k_scaling_upscale), {});
            next.generations[k] = up.accepted() ? up.generation : 0;
        }
        // Its frame is the held-back one only when the job before had the frame before that.
        next.verifiable = m_last_input != UINT64_MAX && m_last_input + 2 == next.frame;
        m_last_input = next.frame;
    }

    // 3. The real frame is presentable once the program's writes and Tandem's copies ran.
    //    Scaled, the presenter shows an upscale of it, made once they did.
    next.ready_value = m_ready_value;
    next.inputs_released = inputs_released;
    if (m_scaled) {
        return queue_for_presenter(std::move(next));
    }
    std::array<VkSemaphoreSubmitInfo, 2> real_waits{
        semaphore_info(m_ready, m_ready_value),
        semaphore_info(runtime.input_timeline(), inputs_released)};
    const VkSemaphoreSubmitInfo real_signal = semaphore_info(m_real_ready[image]);
    VkSubmitInfo2 real_batch{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    real_batch.waitSemaphoreInfoCount = inputs_released > 0 ? 2u : 1u;
    real_batch.pWaitSemaphoreInfos = real_waits.data();
    real_batch.signalSemaphoreInfoCount = 1;
    real_batch.pSignalSemaphoreInfos = &real_signal;
    if (const VkResult r = m_device.submit(real_batch); r != VK_SUCCESS) {
        return r;
    }

    return queue_for_presenter(std::move(next));
}

VkResult SwapchainGeneration::queue_for_presenter(Held next) {
    // 4. The presenter sends it out, after its generated frames. Asked to wait for generated
    //    frames (TANDEM_FRAMEGEN_WAIT_MS, and verify mode), the program also waits here for the
    //    frame before to have gone out, so that the presenter never falls behind and skips one
    //    for a newer.
    {
        std::unique_lock lock(m_items_mutex);
        if (m_dropping.load()) {
            return m_last_result.load(); // the process is exiting (stop_for_exit)
        }
        if (layer_settings().wait.count() > 0 || layer_settings().verify) {
            m_items_changed.wait(lock, [&] { return m_finished == m_queued; });
        }
        m_items.push_back(std::move(next));
        ++m_queued;
    }
    m_items_changed.notify_all();
    return m_last_result.load();
}

void SwapchainGeneration::wait_until_prepared(std::chrono::milliseconds longest) {
    if (m_prepared) {
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    bool all = true;
    const auto real_preparing = [&] {
        return m_scaled &&
               (m_device.runtime().progress(m_upscale).preparing ||
                (m_real_upscale && m_device.runtime().progress(m_real_upscale).preparing));
    };
    while (real_preparing() && std::chrono::steady_clock::now() - start < longest) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    all = !real_preparing();
    for (std::size_t k = 0; k < m_tasks.size(); ++k) {
        while (!takes_frames(k) && std::chrono::steady_clock::now() - start < longest) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        all = all && takes_frames(k);
    }
    m_prepared = all;
    if (m_prepared) {
        note_exit_stop_point(ExitStopPoint::TasksPrepared);
    }
}

TaskDesc SwapchainGeneration::upscale_desc(const std::string& name, TaskId producer) const {
    const VkExtent2D from = m_scaled->program_extent();
    TaskDesc desc = upscale_task(name, from.width, from.height, m_extent.width, m_extent.height);
    desc.placement = Placement::on_a_worker();
    if (producer) {
        // The producer's newest frame: one it made is never held back for an upscale that
        // missed a present.
        desc.inputs[0].producer = producer;
        desc.inputs[0].chain = ChainMode::Newest;
    }
    desc.keep_output_on_worker = m_display.on_worker(); // shown by the worker itself
    return desc;
}

TaskDesc SwapchainGeneration::frame_task(std::size_t k) const {
    // Scaled, frames are generated at the program's size, and then upscaled (frame_upscale_task).
    const VkExtent2D size = m_scaled ? m_scaled->program_extent() : m_extent;
    TaskDesc desc = interpolate_colour_task("tandem-layer frame " + std::to_string(k + 1) + "/" +
                                                std::to_string(m_multiplier),
                                            size.width, size.height);
    desc.placement = Placement::on_a_worker();
    if (m_display.on_worker()) {
        // The real frame's task's newest output, on the worker where both run; shown by the
        // worker itself: nothing comes back.
        desc.inputs[0].producer = m_upscale;
        desc.inputs[0].chain = ChainMode::Newest;
        desc.keep_output_on_worker = true;
    } else if (m_program_sampled) {
        desc.inputs[0].application_usage = VK_IMAGE_USAGE_SAMPLED_BIT;
    }
    return desc;
}

TaskDesc SwapchainGeneration::real_frame_desc() const {
    ComputeTaskDesc pass;
    pass.spirv.assign(std::begin(k_pass_frame_spirv), std::end(k_pass_frame_spirv));
    TaskDesc desc;
    desc.name = "tandem-layer real frame";
    desc.factory = compute_workload(pass);
    desc.width = program_extent().width;
    desc.height = program_extent().height;
    desc.format = VK_FORMAT_R8G8B8A8_UNORM;
    desc.inputs = {{"frame", VK_FORMAT_R8G8B8A8_UNORM, desc.width, desc.height}};
    if (m_program_sampled) {
        desc.inputs[0].application_usage = VK_IMAGE_USAGE_SAMPLED_BIT;
    }
    desc.placement = Placement::on_a_worker();
    desc.keep_output_on_worker = true;
    return desc;
}

void SwapchainGeneration::reshape(std::size_t k) {
    Runtime& runtime = m_device.runtime();
    const std::uint64_t before = runtime.progress(m_tasks[k]).reconfigurations;
    std::string refused;
    try {
        const TaskError error = runtime.reconfigure(m_tasks[k], frame_task(k));
        if (error != TaskError::None) {
            refused = to_string(error);
        }
    } catch (const Error& e) {
        refused = e.what();
    }
    // Its first job at the new size has no frame of that size before it.
    m_jobs[k] = 0;
    if (refused.empty()) {
        m_reshaped_at[k] = before + 1;
        return;
    }
    log_problem("a frame-generation task could not take the new size (" + refused +
                "): a new one is prepared");
    static_cast<void>(runtime.unregister_task(m_tasks[k]));
    m_tasks[k] = runtime.register_task_async(frame_task(k));
    m_reshaped_at[k] = 0;
}

bool SwapchainGeneration::takes_frames(std::size_t k) {
    const TaskProgress progress = m_device.runtime().progress(m_tasks[k]);
    if (progress.preparing || progress.reconfigurations < m_reshaped_at[k]) {
        return false;
    }
    m_reshaped_at[k] = 0;
    return true;
}

void SwapchainGeneration::note_submit_failure(const SubmitResult& result) {
    if (result.error == TaskError::DeviceLost) {
        note_worker_lost(result.reason);
    }
}

void SwapchainGeneration::note_worker_lost(const std::string& reason) {
    // The worker is gone: every frame from now on passes through (the presenter still sends
    // out the real ones; on the worker's display the program's device takes the display back
    // at the next present), and the report says why.
    m_worker_lost = true;
    if (!m_counts.worker_lost.exchange(true)) {
        {
            const std::lock_guard lock(m_counts.summary_mutex);
            m_counts.worker_lost_reason = reason;
        }
        log_problem("the frame-generation worker was lost (" + reason +
                    "); frames pass through from now on");
    }
}

void SwapchainGeneration::note_display_result(VkResult result, const char* call) {
    if (result == VK_ERROR_DEVICE_LOST && m_display.on_worker()) {
        note_worker_lost(std::string(call) +
                         " on the worker's queue returned VK_ERROR_DEVICE_LOST");
    }
}

void SwapchainGeneration::run_presenter() {
    for (;;) {
        Held held;
        {
            std::unique_lock lock(m_items_mutex);
            m_items_changed.wait(lock, [&] { return m_stop || !m_items.empty(); });
            if (m_items.empty()) {
                return; // stopped with nothing left to present
            }
            held = std::move(m_items.front());
            m_items.pop_front();
        }
        present_held(held);
        {
            const std::lock_guard lock(m_items_mutex);
            ++m_finished;
        }
        m_items_changed.notify_all();
    }
}

void SwapchainGeneration::stop_for_exit() noexcept {
    stop_presenter(true);
}

void SwapchainGeneration::stop_presenter(bool drop_queued) noexcept {
    {
        const std::lock_guard lock(m_items_mutex);
        m_stop = true;
        if (drop_queued) {
            m_dropping.store(true);
            m_finished += m_items.size(); // dropped: flush() has nothing to wait for
            m_items.clear();
        }
    }
    m_items_changed.notify_all();
    if (m_presenter.joinable()) {
        m_presenter.join();
    }
}

VkResult SwapchainGeneration::acquire(std::uint64_t timeout, VkSemaphore semaphore, VkFence fence,
                                      std::uint32_t* index) {
    constexpr std::uint64_t k_slice_ns = 1'000'000;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        const auto spent =
            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - start)
                                           .count());
        const std::uint64_t left = timeout > spent ? timeout - spent : 0;
        const std::uint64_t slice = std::min(left, k_slice_ns);
        VkResult result = VK_SUCCESS;
        {
            const std::lock_guard lock(m_swapchain_mutex);
            result = m_vk.AcquireNextImageKHR(m_display.device(), m_swapchain, slice, semaphore,
                                              fence, index);
        }
        // A slice that ran out is the program's timeout only once the whole of it has passed.
        if ((result != VK_TIMEOUT && result != VK_NOT_READY) || slice == left) {
            return result == VK_NOT_READY && timeout > 0 ? VK_TIMEOUT : result;
        }
    }
}

void SwapchainGeneration::note_program_frame(std::chrono::steady_clock::time_point presented) {
    if (m_last_program_frame != std::chrono::steady_clock::time_point{}) {
        const auto interval = presented - m_last_program_frame;
        m_frame_interval = m_frame_interval.count() == 0
                               ? interval
                               : (m_frame_interval * 7 + interval) / 8; // smoothed over ~8 frames
    }
    m_last_program_frame = presented;
}

void SwapchainGeneration::pace_next_present() {
    if (m_last_present == std::chrono::steady_clock::time_point{}) {
        return; // the first present of a real frame's round
    }
    if (m_pace && m_frame_interval.count() > 0) {
        const auto due = m_last_present + m_frame_interval / m_multiplier;
        std::unique_lock lock(m_items_mutex);
        m_items_changed.wait_until(lock, due, [&] { return !m_items.empty() || m_stop; });
    }
    m_counts.note(m_counts.gaps_us, micros_since(m_last_present));
}

void SwapchainGeneration::present_held(const Held& held) {
    m_counts.note(m_counts.presenter_started_us, micros_since(held.presented));
    m_device.runtime().pump();
    note_program_frame(held.presented);
    m_last_present = {};
    const LayerSettings& settings = layer_settings();
    for (std::size_t k = 0; k < held.generations.size() && !settings.verify; ++k) {
        if (held.generations[k] != 0) {
            wait_for_output(shown_task(k), held.generations[k], held.presented);
            if (m_dropping.load()) {
                return;
            }
            m_counts.note(m_counts.generated_noticed_us, micros_since(held.presented));
            if (present_generated(k, held.generations[k])) {
                m_counts.note(m_counts.generated_delays_us, micros_since(held.presented));
            }
        }
    }
    if (m_dropping.load()) {
        return;
    }
    if (m_scaled) {
        present_scaled_real(held);
        return;
    }
    VkSemaphore ready = m_real_ready[held.image];
    if (settings.verify || !settings.dump_folder.empty()) {
        ready = check_real(held, ready);
    }
    pace_next_present();
    const VkPresentInfoKHR info = single_present(m_swapchain, held.image, ready);
    VkResult result = VK_SUCCESS;
    {
        const std::lock_guard lock(m_swapchain_mutex);
        result = m_display.present(info);
    }
    m_real_presented.fetch_add(presented(result) ? 1 : 0, std::memory_order_relaxed);
    m_last_result.store(result);
    note_exit_stop_point(ExitStopPoint::FramePresented);
    m_counts.note(m_counts.delays_us, micros_since(held.presented));
}

bool SwapchainGeneration::make_checks() {
    const LayerSettings& settings = layer_settings();
    try {
        if (m_checks.cmd == VK_NULL_HANDLE) {
            m_checks.cmd = allocate_command_buffers(m_vk, m_display.device(), m_pool, 1).front();
            for (std::size_t i = 0; i < m_images.size(); ++i) {
                m_checks.checked.push_back(make_semaphore(VK_SEMAPHORE_TYPE_BINARY));
            }
            // The dump needs the real and generated frames; verify mode the two around the
            // held-back one and the held-back one too.
            auto host_frame = [&] {
                return std::make_unique<HostFrame>(m_vk, m_display.device(), m_display.memory(),
                                                   m_extent);
            };
            m_checks.real = host_frame();
            m_checks.generated = host_frame();
            if (settings.verify) {
                m_checks.previous = host_frame();
                m_checks.truth = host_frame();
            }
        }
    } catch (const std::exception& e) {
        log_problem(std::string("no frame checks (verify mode, dump) for a swapchain: ") +
                    e.what());
        return false;
    }
    return true;
}

VkSemaphore SwapchainGeneration::check_real(const Held& held, VkSemaphore ready) {
    const LayerSettings& settings = layer_settings();
    if (!make_checks()) {
        return ready;
    }
    // The real frame to the host, after the program's writes and Tandem's copy of it.
    m_vk.ResetCommandBuffer(m_checks.cmd, 0);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    m_vk.BeginCommandBuffer(m_checks.cmd, &begin);
    m_checks.real->record_copy(m_checks.cmd, m_images[held.image], VK_IMAGE_LAYOUT_PRESENT_SRC_KHR);
    m_vk.EndCommandBuffer(m_checks.cmd);
    const VkSemaphore checked = m_checks.checked[held.image];
    if (!run_check(ready, 0, checked, 0)) {
        return ready; // not submitted: the present waits for the frame as it would have
    }
    if (settings.verify) {
        if (held.held_back) {
            std::swap(m_checks.truth, m_checks.real);
        } else {
            verify_generated(held);
            std::swap(m_checks.previous, m_checks.real);
        }
    } else if (const auto index = claim_dump()) {
        dump(*index, "real", m_checks.real->texels());
    }
    return checked;
}

void SwapchainGeneration::verify_generated(const Held& held) {
    if (held.frame < 2) {
        return; // no held-back frame before the first two
    }
    if (!held.verifiable || held.generations.empty() || held.generations[0] == 0) {
        const std::lock_guard lock(m_counts.summary_mutex);
        m_counts.verify.missed += 1; // no job made the held-back frame
        return;
    }
    wait_for_output(m_tasks[0], held.generations[0], held.presented);
    if (!read_generated(0, held.generations[0])) {
        const std::lock_guard lock(m_counts.summary_mutex);
        m_counts.verify.missed += 1;
        return;
    }
    const auto truth = m_checks.truth->texels();
    const auto generated = m_checks.generated->texels();
    const auto before = m_checks.previous->texels();
    const auto after = m_checks.real->texels();
    const double generated_db = psnr_db(generated, truth);
    const double blend_db = blend_psnr_db(before, after, truth);
    {
        const std::lock_guard lock(m_counts.summary_mutex);
        m_counts.verify.add(generated_db, blend_db);
    }
    if (const auto index = claim_dump()) {
        std::vector<std::uint8_t> blend(truth.size());
        for (std::size_t i = 0; i < blend.size(); ++i) {
            blend[i] = static_cast<std::uint8_t>((before[i] + after[i] + 1) / 2);
        }
        dump(*index, "truth", truth);
        dump(*index, "generated", generated);
        dump(*index, "blend", blend);
    }
}

bool SwapchainGeneration::read_generated(std::size_t task, std::uint64_t generation) {
    Runtime& runtime = m_device.runtime();
    const AcquireResult acquired = runtime.acquire(m_tasks[task]);
    if (!acquired || acquired->generation != generation) {
        if (acquired) {
            static_cast<void>(runtime.release(*acquired, 0));
        }
        return false;
    }
    const Lease& lease = *acquired;
    m_vk.ResetCommandBuffer(m_checks.cmd, 0);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    m_vk.BeginCommandBuffer(m_checks.cmd, &begin);
    m_checks.generated->record_copy(m_checks.cmd, lease.image, lease.layout);
    m_vk.EndCommandBuffer(m_checks.cmd);
    const std::uint64_t release_value = m_display.next_release_value();
    const bool copied =
        run_check(lease.wait_semaphore, lease.wait_value, VK_NULL_HANDLE, release_value);
    static_cast<void>(runtime.release(lease, copied ? release_value : 0));
    return copied;
}

bool SwapchainGeneration::run_check(VkSemaphore wait, std::uint64_t wait_value, VkSemaphore signal,
                                    std::uint64_t release_value, TimelinePoint also) {
    std::vector<VkSemaphoreSubmitInfo> wait_info{semaphore_info(wait, wait_value)};
    if (also.semaphore != VK_NULL_HANDLE && also.value != 0) {
        wait_info.push_back(semaphore_info(also.semaphore, also.value));
    }
    std::vector<VkSemaphoreSubmitInfo> signals{semaphore_info(m_done, ++m_done_value)};
    if (signal != VK_NULL_HANDLE) {
        signals.push_back(semaphore_info(signal));
    }
    if (release_value != 0) {
        signals.push_back(semaphore_info(m_display.reads_timeline(), release_value));
    }
    VkCommandBufferSubmitInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cmd_info.commandBuffer = m_checks.cmd;
    if (m_display.submit(batch_info(wait_info, &cmd_info, signals)) != VK_SUCCESS) {
        log_problem("a frame check's copy could not be submitted");
        return false;
    }
    return wait_done(m_done_value);
}

bool SwapchainGeneration::wait_done(std::uint64_t value) {
    return wait_timeline(m_vk, m_display.device(), m_done, value);
}

std::optional<std::uint32_t> SwapchainGeneration::claim_dump() {
    const LayerSettings& settings = layer_settings();
    if (settings.dump_folder.empty() || m_checks.dump_failed) {
        return std::nullopt;
    }
    const std::uint32_t index = m_counts.dumped.fetch_add(1);
    if (index >= settings.dump_frames) {
        return std::nullopt;
    }
    return index;
}

void SwapchainGeneration::dump(std::uint32_t index, const char* kind,
                               std::span<const std::uint8_t> texels,
                               std::optional<VkExtent2D> extent) {
    const std::string& folder = layer_settings().dump_folder;
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    char name[64];
    std::snprintf(name, sizeof(name), "/%05u-%s.ppm", index, kind);
    if (error || !write_ppm(folder + name, texels, extent.value_or(m_extent), m_format)) {
        m_checks.dump_failed = true;
        log_problem("the dump could not write " + folder + name +
                    (error ? " (" + error.message() + ")" : std::string()) +
                    "; no more frames are dumped");
    }
}

void SwapchainGeneration::wait_for_output(TaskId task, std::uint64_t generation,
                                          std::chrono::steady_clock::time_point presented,
                                          bool real_on_worker) {
    // Polled: the runtime publishes outputs in pump(), which the presenter calls itself.
    constexpr auto k_poll = std::chrono::microseconds(100);
    // Verify mode measures, it does not pace: it waits for every generated frame it compares.
    const std::chrono::milliseconds wait =
        layer_settings().verify ? std::max(layer_settings().wait, std::chrono::milliseconds(5000))
                                : layer_settings().wait;
    const std::chrono::steady_clock::duration longest =
        std::max<std::chrono::steady_clock::duration>(std::chrono::milliseconds(250), wait);
    const auto waited = presented + wait;
    Runtime& runtime = m_device.runtime();
    for (;;) {
        const TaskProgress progress = runtime.progress(task);
        if (progress.newest_generation >= generation || progress.error != TaskError::None ||
            progress.stopped || progress.in_flight == 0 || m_dropping.load()) {
            return;
        }
        bool next_presented = false;
        {
            // A real frame on the worker's display has no other way out. With FIFO it is
            // waited for as a display paces its program: the program's image comes back only
            // once it was shown. Where the display does not pace (mailbox, immediate), it is
            // given up once the presenter fell two frames behind.
            const std::lock_guard lock(m_items_mutex);
            const std::size_t behind =
                !real_on_worker ? 1 : (m_pace ? 2 : std::numeric_limits<std::size_t>::max());
            next_presented = m_items.size() >= behind || m_stop;
        }
        const auto now = std::chrono::steady_clock::now();
        if ((next_presented && now >= waited) || now - presented >= longest) {
            return;
        }
        std::this_thread::sleep_for(k_poll);
        runtime.pump();
    }
}

bool SwapchainGeneration::present_generated(std::size_t k, std::uint64_t generation) {
    const std::optional<VkResult> shown = present_output(shown_task(k), generation, false);
    if (shown && presented(*shown)) {
        m_counts.generated.fetch_add(1, std::memory_order_relaxed);
        note_exit_stop_point(ExitStopPoint::FirstGenerated);
        return true;
    }
    m_counts.skipped.fetch_add(1, std::memory_order_relaxed);
    return false;
}

void SwapchainGeneration::dump_rendered(const Held& held) {
    if (layer_settings().dump_folder.empty() || !make_checks()) {
        return;
    }
    try {
        if (!m_checks.rendered) {
            m_checks.rendered =
                std::make_unique<HostFrame>(m_device.dispatch(), m_device.device(),
                                            m_device.memory(), m_scaled->program_extent());
        }
    } catch (const std::exception& e) {
        log_problem(std::string("the dump has no copy of the program's frames: ") + e.what());
        return;
    }
    const std::optional<std::uint32_t> index = claim_dump();
    if (!index) {
        return;
    }
    m_vk.ResetCommandBuffer(m_checks.cmd, 0);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    m_vk.BeginCommandBuffer(m_checks.cmd, &begin);
    m_checks.rendered->record_copy(m_checks.cmd, m_program_images[held.image],
                                   VK_IMAGE_LAYOUT_PRESENT_SRC_KHR);
    m_vk.EndCommandBuffer(m_checks.cmd);
    // After the program's writes and Tandem's copies of the image (the copy changes its layout).
    if (run_check(m_ready, held.ready_value, VK_NULL_HANDLE, 0,
                  {m_device.runtime().input_timeline(), held.inputs_released})) {
        dump(*index, "rendered", m_checks.rendered->texels(), m_scaled->program_extent());
    }
}

void SwapchainGeneration::present_scaled_real(const Held& held) {
    Runtime& runtime = m_device.runtime();
    if (!m_display.on_worker()) {
        dump_rendered(held); // on the worker's display the real frame is dumped as presented
    }
    std::optional<VkResult> shown;
    if (held.upscaled != 0) {
        wait_for_output(shown_real(), held.upscaled, held.presented, m_display.on_worker());
        shown = present_output(shown_real(), held.upscaled, true);
    }
    const std::array readers{TimelinePoint{m_ready, held.ready_value},
                             TimelinePoint{runtime.input_timeline(), held.inputs_released}};
    if (shown) {
        m_scaled->release(held.image, readers);
        if (upscales_frames()) {
            m_counts.upscaled.fetch_add(1, std::memory_order_relaxed);
        }
    } else if (m_display.on_worker()) {
        // The worker's copy of the frame is not there (not accepted, not ready in time, no
        // image free): the program's device has no swapchain to show it on. It is not shown.
        m_scaled->release(held.image, readers);
        m_counts.real_not_shown.fetch_add(1, std::memory_order_relaxed);
        return;
    } else {
        // The worker's upscale is not there (not accepted, not ready in time, no image free):
        // the primary's own, so that the program's frame still goes out now.
        std::vector<VkSemaphoreSubmitInfo> waits{semaphore_info(m_ready, held.ready_value)};
        if (held.inputs_released != 0) {
            waits.push_back(semaphore_info(runtime.input_timeline(), held.inputs_released));
        }
        const std::optional<std::uint32_t> dump_index =
            !layer_settings().dump_folder.empty() && make_checks() ? claim_dump() : std::nullopt;
        pace_next_present();
        {
            const std::lock_guard lock(m_swapchain_mutex);
            shown = m_scaled->blit_present(held.image, waits, readers,
                                           dump_index ? m_checks.real.get() : nullptr);
        }
        m_counts.blitted.fetch_add(1, std::memory_order_relaxed);
        if (dump_index && m_scaled->wait(m_scaled->done_point())) {
            dump(*dump_index, "real", m_checks.real->texels());
        }
    }
    m_real_presented.fetch_add(presented(*shown) ? 1 : 0, std::memory_order_relaxed);
    m_last_result.store(*shown);
    note_exit_stop_point(ExitStopPoint::FramePresented);
    m_counts.note(m_counts.delays_us, micros_since(held.presented));
}

std::optional<VkResult> SwapchainGeneration::present_output(TaskId task, std::uint64_t generation,
                                                            bool real) {
    Runtime& runtime = m_device.runtime();
    const AcquireResult acquired =
        m_display.on_worker() ? runtime.acquire_on_worker(task) : runtime.acquire(task);
    auto skip = [&]() -> std::optional<VkResult> {
        if (acquired) {
            static_cast<void>(runtime.release(*acquired, 0));
        }
        return std::nullopt;
    };
    // Only the frame made for the held one: an older output is a job not finished, a newer one
    // belongs after the held frame.
    if (!acquired || acquired->generation != generation) {
        return skip();
    }
    const std::size_t slot_index = m_next_slot % m_slots.size();
    CopySlot& slot = m_slots[slot_index];
    std::uint64_t done = 0;
    if (m_vk.GetSemaphoreCounterValue(m_display.device(), m_done, &done) != VK_SUCCESS ||
        done < slot.done_value) {
        return skip(); // the slot's last copy still runs: never wait for it
    }
    note_copy_time(slot_index); // its last copy is done
    std::uint32_t target = 0;
    VkResult got = VK_SUCCESS;
    {
        const std::lock_guard lock(m_swapchain_mutex);
        // A real frame goes out in any case (the primary's blit otherwise, which waits for an
        // image too): it may wait a little for one; a generated frame never does.
        got = m_vk.AcquireNextImageKHR(m_display.device(), m_swapchain,
                                       real ? k_real_image_wait_ns : 0, slot.acquired,
                                       VK_NULL_HANDLE, &target);
    }
    if (!presented(got)) {
        note_display_result(got, "vkAcquireNextImageKHR");
        return skip(); // no image free now (or the swapchain is out of date)
    }
    ++m_next_slot;
    const Lease& lease = *acquired;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    m_vk.ResetCommandBuffer(slot.cmd, 0);
    m_vk.BeginCommandBuffer(slot.cmd, &begin);
    const auto first_query = static_cast<std::uint32_t>(2 * slot_index);
    if (m_copy_times != VK_NULL_HANDLE) {
        m_vk.CmdResetQueryPool(slot.cmd, m_copy_times, first_query, 2);
        m_vk.CmdWriteTimestamp(slot.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, m_copy_times,
                               first_query);
    }
    if (m_frame_copy) {
        record_compute_copy(slot.cmd, slot_index, lease, target);
    } else {
        record_command_copy(slot.cmd, lease, target);
    }
    if (m_copy_times != VK_NULL_HANDLE) {
        m_vk.CmdWriteTimestamp(slot.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, m_copy_times,
                               first_query + 1);
        slot.timed = true;
    }
    // The dump reads the frame from the swapchain image, as it is presented, byte for byte.
    const bool dumps = !layer_settings().dump_folder.empty() && make_checks();
    const HostFrame* const dump_frame = real ? m_checks.real.get() : m_checks.generated.get();
    const std::optional<std::uint32_t> dump_index =
        dumps && dump_frame != nullptr ? claim_dump() : std::nullopt;
    if (dump_index) {
        dump_frame->record_copy(slot.cmd, m_images[target], VK_IMAGE_LAYOUT_PRESENT_SRC_KHR);
    }
    m_vk.EndCommandBuffer(slot.cmd);

    const std::uint64_t release_value = m_display.next_release_value();
    slot.done_value = ++m_done_value;
    const std::array waits{semaphore_info(slot.acquired),
                           semaphore_info(lease.wait_semaphore, lease.wait_value)};
    const std::array signals{semaphore_info(m_generated_ready[target]),
                             semaphore_info(m_done, slot.done_value),
                             semaphore_info(m_display.reads_timeline(), release_value)};
    VkCommandBufferSubmitInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cmd_info.commandBuffer = slot.cmd;
    const VkResult submitted = m_display.submit(batch_info(waits, &cmd_info, signals));
    static_cast<void>(runtime.release(lease, submitted == VK_SUCCESS ? release_value : 0));
    if (submitted != VK_SUCCESS) {
        log_problem(std::string(real ? "an upscaled" : "a generated") +
                    " frame's copy could not be submitted (" + std::to_string(submitted) + ")");
        note_display_result(submitted, "vkQueueSubmit2");
        return std::nullopt;
    }
    const VkPresentInfoKHR info = single_present(m_swapchain, target, m_generated_ready[target]);
    pace_next_present(); // at 3x, the second generated frame a third of a frame after the first
    VkResult shown = VK_SUCCESS;
    {
        const std::lock_guard lock(m_swapchain_mutex);
        shown = m_display.present(info);
    }
    if (presented(shown)) {
        m_last_present = std::chrono::steady_clock::now();
    }
    note_display_result(shown, "vkQueuePresentKHR");
    if (dump_index && wait_done(slot.done_value)) {
        dump(*dump_index, real ? "real" : "generated", dump_frame->texels());
    }
    return shown;
}

std::vector<TaskId> KeptTasks::all() const {
    std::vector<TaskId> every(frame_upscales);
    every.insert(every.end(), tasks.begin(), tasks.end());
    if (real_upscale) {
        every.push_back(real_upscale);
    }
    if (upscale) {
        every.push_back(upscale);
    }
    return every;
}

KeptTasks SwapchainGeneration::take_tasks() {
    record_summary();
    KeptTasks kept{
        {}, m_extent, m_upscale, std::move(m_frame_upscales), m_real_upscale, program_extent()};
    m_upscale = {};
    m_real_upscale = {};
    m_frame_upscales.clear();
    for (std::size_t k = 0; k < m_tasks.size(); ++k) {
        // A task whose reshape to this size has not taken effect yet is not handed on: a second
        // reconfigure would supersede the first, and the count the new swapchain waits for
        // could then be reached by the shape in between.
        if (m_reshaped_at[k] != 0 && !takes_frames(k)) {
            static_cast<void>(m_device.runtime().unregister_task(m_tasks[k]));
        } else {
            kept.tasks.push_back(m_tasks[k]);
        }
    }
    m_tasks.clear();
    m_jobs.clear();
    m_reshaped_at.clear();
    return kept;
}

void SwapchainGeneration::flush() {
    {
        std::unique_lock lock(m_items_mutex);
        m_items_changed.wait(lock, [&] { return m_finished == m_queued; });
    }
    wait_idle();
}

} // namespace tandem::layer
