#include "calibrate/measure.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include <glm/gtc/matrix_transform.hpp>

#include "core/handle.hpp"
#include "core/resources.hpp"
#include "core/stats.hpp"
#include "core/vk_check.hpp"
#include "scene/primitives.hpp"
#include "scene/snapshot.hpp"
#include "scene/snapshot_codec.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/transfer_link.hpp"
#include "workloads/pattern.hpp"
#include "workloads/scene_capture_workload.hpp"

namespace tandem::detail {

using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Everything before -> everything after: successive measurements never overlap, whatever the
// recorded commands' own barriers assume about earlier work.
void full_barrier(VkCommandBuffer cmd) {
    memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                   VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
}

// An RGBA8 extent of `bytes` (about square).
VkExtent2D extent_of(std::uint64_t bytes) {
    const std::uint64_t pixels = std::max<std::uint64_t>(1, bytes / 4);
    auto w = static_cast<std::uint32_t>(std::sqrt(static_cast<double>(pixels)));
    w = std::max(1u, w);
    const auto h = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, pixels / w));
    return {w, h};
}

// A sphere of about `triangles` triangles (2 x segments x rings).
std::shared_ptr<const SceneAssets> sphere_assets(std::uint64_t triangles) {
    const auto rings = std::max<std::uint32_t>(
        2, static_cast<std::uint32_t>(std::lround(std::sqrt(static_cast<double>(triangles) / 4))));
    const auto segments =
        std::max<std::uint32_t>(3, static_cast<std::uint32_t>(triangles / 2 / rings));
    auto assets = std::make_shared<SceneAssets>();
    Material m;
    m.name = "calibration";
    m.base_color = glm::vec4(0.8f, 0.4f, 0.2f, 1.0f);
    assets->materials.push_back(m);
    assets->meshes.push_back(make_sphere(1.0f, segments, rings, 0));
    return assets;
}

std::vector<std::byte> sphere_snapshot(float aspect) {
    FrameSnapshot s;
    const glm::vec3 eye{0.0f, 0.5f, 3.0f};
    s.camera.view = glm::inverse(camera_transform(eye, glm::vec3(0.0f)));
    s.camera.projection = projection_matrix(CameraModel{}, aspect);
    s.camera.position = eye;
    s.clear_color = glm::vec4(0.1f, 0.1f, 0.1f, 1.0f);
    InstanceSnapshot instance;
    instance.mesh = 0;
    s.instances.push_back(instance);
    return encode_snapshot(s);
}

VkResult submit_empty(const Device& device, const VkSemaphoreSubmitInfo* wait,
                      const VkSemaphoreSubmitInfo& signal) {
    return device.queue(QueueRole::Main)
        .submit_one(VK_NULL_HANDLE, {wait, wait != nullptr ? 1u : 0u}, {&signal, 1});
}

} // namespace

struct Measurer::Dev {
    std::unique_ptr<Device> device; // first: destroyed last
    CommandPool pool;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    Handle<VkFence> fence;
    Handle<VkQueryPool> queries;
    double period_ns = 0;
    std::uint64_t mask = 0;
    std::unique_ptr<Workload> prepare_pattern; // 256x256, for the preparation timing
    Image prepare_target;

    ~Dev() {
        // The calibration's own device (Measurer opens one per adapter), never an engine's: no
        // other thread uses its queues.
        if (device) {
            (void)vkDeviceWaitIdle(device->handle());
        }
    }

    // Resets and begins the command buffer with a full barrier.
    void begin() const {
        vk_check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer calibration");
        VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        vk_check(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer calibration");
        full_barrier(cmd);
    }

    void submit() const {
        vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer calibration");
        VkCommandBufferSubmitInfo c{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        c.commandBuffer = cmd;
        VkSubmitInfo2 s{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        s.commandBufferInfoCount = 1;
        s.pCommandBufferInfos = &c;
        vk_check(device->queue(QueueRole::Main).submit({&s, 1}, fence.get()),
                 "vkQueueSubmit2 calibration");
    }

    void wait(std::chrono::milliseconds timeout) const {
        VkFence f = fence.get();
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
        vk_check(vkWaitForFences(device->handle(), 1, &f, VK_TRUE, static_cast<std::uint64_t>(ns)),
                 "vkWaitForFences calibration");
        vk_check(vkResetFences(device->handle(), 1, &f), "vkResetFences calibration");
    }

    // Records `record` between two timestamps, submits and waits: the GPU time in ms, or the CPU
    // wall time of submit + wait where the queue has no timestamps.
    double timed(const std::function<void(VkCommandBuffer)>& record,
                 std::chrono::milliseconds timeout) const {
        begin();
        if (queries) {
            vkCmdResetQueryPool(cmd, queries.get(), 0, 2);
            vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, queries.get(), 0);
        }
        record(cmd);
        if (queries) {
            vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, queries.get(), 1);
        }
        const auto t0 = Clock::now();
        submit();
        wait(timeout);
        const double wall = ms_since(t0);
        if (!queries) {
            return wall;
        }
        std::uint64_t stamps[2] = {0, 0};
        vk_check(vkGetQueryPoolResults(device->handle(), queries.get(), 0, 2, sizeof stamps, stamps,
                                       sizeof(std::uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                 "vkGetQueryPoolResults calibration");
        const std::uint64_t ticks = (stamps[1] - stamps[0]) & mask;
        return static_cast<double>(ticks) * period_ns * 1e-6;
    }
};

Measurer::Measurer(const Instance& instance, const std::vector<Adapter>& adapters,
                   const std::vector<std::uint32_t>& indices, MeasureOptions options)
    : m_options(options) {
    for (const std::uint32_t index : indices) {
        const auto it = std::find_if(adapters.begin(), adapters.end(),
                                     [&](const Adapter& a) { return a.info.index == index; });
        if (it == adapters.end()) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Adapter " + std::to_string(index) + " is not present",
                        "Run `tandem devices` to list the adapters");
        }
        auto d = std::make_unique<Dev>();
        DeviceOptions device_options;
        device_options.label = "calibrate" + std::to_string(index);
        d->device = std::make_unique<Device>(instance, *it, device_options);
        const Device& device = *d->device;
        d->pool = CommandPool(device, device.queue(QueueRole::Main).family(), "calibration pool");
        d->cmd = d->pool.allocate("calibration commands");
        d->fence = create_fence(device, "calibration fence");

        if (auto ts = create_timestamp_pool(device, QueueRole::Main, 2, "calibration timestamps")) {
            d->queries = std::move(ts->pool);
            d->period_ns = ts->period_ns;
            d->mask = ts->mask;
        }

        WorkloadParams params;
        params.task_name = "calibration preparation";
        params.width = 256;
        params.height = 256;
        params.slots = 1;
        d->prepare_pattern = std::make_unique<PatternWorkload>(device, params);
        d->prepare_target = create_image(device, {256,
                                                  256,
                                                  VK_FORMAT_R8G8B8A8_UNORM,
                                                  d->prepare_pattern->target_usage(),
                                                  "calibration preparation target",
                                                  {}});
        m_devices.emplace(index, std::move(d));
    }
}

Measurer::~Measurer() = default;

Measurer::Dev& Measurer::dev(std::uint32_t adapter) const {
    const auto it = m_devices.find(adapter);
    if (it == m_devices.end()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Adapter " + std::to_string(adapter) + " was not opened for calibration",
                    "Calibrate the adapters the run uses");
    }
    return *it->second;
}

void Measurer::add_task_content(const std::string& key, std::shared_ptr<const SceneAssets> assets,
                                std::vector<std::byte> snapshot) {
    if (!assets) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Calibrating task " + key + " needs the scene's assets",
                    "Pass Scene::shared_assets()");
    }
    m_tasks[key] = {std::move(assets), std::move(snapshot)};
}

std::string Measurer::timing(std::uint32_t adapter) const {
    return dev(adapter).queries ? "gpu-timestamps" : "cpu-wall";
}

std::uint32_t Measurer::repetitions() const noexcept {
    return m_options.quick ? 3 : 7;
}

std::vector<std::uint64_t> Measurer::transfer_sizes() const {
    auto sizes = reference_transfer_sizes();
    if (m_options.quick && sizes.size() > 2) {
        sizes.resize(2);
    }
    return sizes;
}

CalibrationHooks Measurer::hooks() {
    CalibrationHooks h;
    h.workload = [this](const DeviceInfo& d, const ReferenceWorkload& w) { return workload(d, w); };
    h.prepare = [this](const DeviceInfo& d) { return prepare(d); };
    h.reintegrate = [this](const DeviceInfo& d) { return reintegrate(d); };
    h.transfer = [this](const PairInfo& p, TransferPath path) { return transfer(p, path); };
    h.sync = [this](const PairInfo& p) { return sync(p); };
    return h;
}

std::vector<double> Measurer::workload(const DeviceInfo& info, const ReferenceWorkload& w) {
    Dev& d = dev(info.index);
    const Device& device = *d.device;
    WorkloadParams params;
    params.task_name = "calibration " + w.kind;
    params.width = w.width;
    params.height = w.height;
    params.slots = 1;
    std::unique_ptr<Workload> workload;
    std::vector<std::byte> snapshot;
    // Captures time themselves the way they do in a run (their own two timestamps, inside the
    // query reset they record), so calibration and the runtime's measurements agree; the
    // calibration's outer pair of timestamps would add the reset, about 5 us on an H200.
    auto own_times = std::make_shared<SceneCaptureTimes>();
    if (w.kind == "pattern") {
        workload = std::make_unique<PatternWorkload>(device, params);
    } else if (w.kind == "capture" && !w.content.empty()) {
        const auto it = m_tasks.find(w.content);
        if (it == m_tasks.end()) {
            return {};
        }
        workload =
            std::make_unique<SceneCaptureWorkload>(device, params, it->second.assets, own_times);
        snapshot = it->second.snapshot;
    } else if (w.kind == "capture") {
        workload = std::make_unique<SceneCaptureWorkload>(device, params, sphere_assets(w.work),
                                                          own_times);
        snapshot = sphere_snapshot(static_cast<float>(w.width) / static_cast<float>(w.height));
    } else {
        return {};
    }
    const Image target = create_image(device, {w.width,
                                               w.height,
                                               VK_FORMAT_R8G8B8A8_UNORM,
                                               workload->target_usage(),
                                               "calibration target",
                                               {}});
    WorkloadTarget t;
    t.image = target.get();
    t.view = target.view.get();
    t.format = target.format;
    t.width = w.width;
    t.height = w.height;
    t.layout = VK_IMAGE_LAYOUT_UNDEFINED;
    std::vector<double> times;
    VkResult status = VK_SUCCESS;
    SceneCaptureTimes::DeviceTime seen;
    for (std::uint32_t i = 0; i <= repetitions(); ++i) {
        double ms = d.timed(
            [&](VkCommandBuffer cmd) {
                const VkResult r = workload->record(cmd, 0, t, i + 1, snapshot);
                status = r != VK_SUCCESS ? r : status;
            },
            m_options.timeout);
        if (status != VK_SUCCESS) {
            throw Error(status, "recording the " + w.kind + " calibration workload",
                        "Check the device with `tandem devices`");
        }
        workload->completed(0, i + 1); // timed() waited for it
        const auto own = own_times->busy();
        if (const auto it = own.find(info.index); it != own.end() && it->second.timed) {
            if (it->second.generations == seen.generations + 1) {
                ms = it->second.busy_ms - seen.busy_ms;
            }
            seen = it->second;
        }
        if (i > 0) { // the first run warms caches and pipelines
            times.push_back(ms);
        }
    }
    return times;
}

std::vector<double> Measurer::prepare(const DeviceInfo& info) {
    Dev& d = dev(info.index);
    WorkloadTarget t;
    t.image = d.prepare_target.get();
    t.view = d.prepare_target.view.get();
    t.format = d.prepare_target.format;
    t.width = 256;
    t.height = 256;
    std::vector<double> times;
    for (std::uint32_t i = 0; i <= repetitions(); ++i) {
        const auto t0 = Clock::now();
        d.begin();
        const VkResult r = d.prepare_pattern->record(d.cmd, 0, t, i + 1, {});
        if (r != VK_SUCCESS) {
            throw Error(r, "recording the preparation calibration job",
                        "Check the device with `tandem devices`");
        }
        d.submit();
        const double ms = ms_since(t0);
        d.wait(m_options.timeout);
        if (i > 0) {
            times.push_back(ms);
        }
    }
    return times;
}

std::vector<TransferSample> Measurer::reintegrate(const DeviceInfo& info) {
    Dev& d = dev(info.index);
    const Device& device = *d.device;
    std::vector<TransferSample> samples;
    for (const std::uint64_t bytes : transfer_sizes()) {
        const VkExtent2D e = extent_of(bytes);
        const VkDeviceSize size = static_cast<VkDeviceSize>(e.width) * e.height * 4;
        const Buffer staging = create_buffer(
            device, {size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "calibration reintegration staging"});
        std::memset(staging.mapped, 0x80, size);
        flush_buffer(device, staging);
        const Image image =
            create_image(device, {e.width,
                                  e.height,
                                  VK_FORMAT_R8G8B8A8_UNORM,
                                  VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                                  "calibration reintegration image",
                                  {}});
        for (std::uint32_t i = 0; i <= repetitions(); ++i) {
            const double ms = d.timed(
                [&](VkCommandBuffer cmd) {
                    image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
                    VkBufferImageCopy region{};
                    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
                    region.imageExtent = {e.width, e.height, 1};
                    vkCmdCopyBufferToImage(cmd, staging.get(), image.get(),
                                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
                    image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
                                  VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
                },
                m_options.timeout);
            if (i > 0) {
                samples.push_back({size, ms});
            }
        }
    }
    return samples;
}

std::vector<TransferSample> Measurer::transfer(const PairInfo& pair, TransferPath path) {
    const Device& worker = *dev(pair.worker).device;
    const Device& primary = *dev(pair.primary).device;
    std::vector<TransferSample> samples;
    for (const std::uint64_t bytes : transfer_sizes()) {
        const VkExtent2D e = extent_of(bytes);
        TransferDesc desc;
        desc.width = e.width;
        desc.height = e.height;
        desc.slots = 1;
        desc.forced = path;
        desc.timeout = m_options.timeout;
        TransferLink link(worker, primary, pair, desc);
        // Zero copy: source and target are one allocation, seen from each side.
        const LinkImages images =
            link.create_images(0, "calibration transfer", VK_IMAGE_USAGE_TRANSFER_DST_BIT);
        const Image& source = images.worker;
        const Image& target = images.primary;
        submit_and_wait(worker, QueueRole::Main, [&](VkCommandBuffer cmd) {
            image_barrier(cmd, source.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                          VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT);
            const VkClearColorValue color{{0.5f, 0.25f, 0.75f, 1.0f}};
            const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
            vkCmdClearColorImage(cmd, source.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1,
                                 &range);
            image_barrier(cmd, source.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT);
        });
        VkImageLayout target_layout = VK_IMAGE_LAYOUT_UNDEFINED;
        VkImageLayout source_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        for (std::uint32_t i = 0; i <= repetitions(); ++i) {
            TransferTicket ticket;
            const auto t0 = Clock::now();
            const VkResult r =
                link.submit(0, source.get(), source_layout,
                            VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO},
                            target.get(), target_layout, ticket);
            if (r != VK_SUCCESS) {
                throw Error(r, std::string("a ") + to_string(path) + " calibration transfer",
                            link.failed() ? link.error() : "Check the pair with `tandem devices`");
            }
            if (const VkResult waited =
                    link.primary_timeline().wait(ticket.primary_value, m_options.timeout);
                waited != VK_SUCCESS) {
                throw Error(waited,
                            std::string("a ") + to_string(path) + " calibration transfer from " +
                                "adapter " + std::to_string(pair.worker) + " did not finish",
                            link.failed() ? link.error() : "Check the pair with `tandem probe`");
            }
            const double ms = ms_since(t0);
            target_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
            source_layout = link.worker_layout_after(source_layout);
            if (i > 0) {
                samples.push_back({static_cast<std::uint64_t>(e.width) * e.height * 4, ms});
            }
        }
    }
    return samples;
}

std::vector<double> Measurer::sync(const PairInfo& pair) {
    const Device& worker = *dev(pair.worker).device;
    const Device& primary = *dev(pair.primary).device;
    TimelineSemaphore worker_sem(worker, "calibration sync worker", 0, pair.gpu_side_sync);
    TimelineSemaphore primary_sem(primary, "calibration sync primary", 0);
    std::optional<TimelineSemaphore> imported;
    if (pair.gpu_side_sync) {
        imported.emplace(
            TimelineSemaphore::import_from(primary, worker_sem, "calibration sync imported"));
    }
    std::uint64_t wv = 0;
    std::uint64_t pv = 0;
    const auto check = [](VkResult r, const char* what) {
        if (r != VK_SUCCESS) {
            throw Error(r, what, "Check the pair with `tandem probe`");
        }
    };
    std::vector<double> base;
    std::vector<double> total;
    std::vector<double> bridged;
    for (std::uint32_t i = 0; i <= repetitions(); ++i) {
        // The worker's own round trip.
        auto t0 = Clock::now();
        ++wv;
        check(submit_empty(worker, nullptr,
                           worker_sem.submit_info(wv, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)),
              "submitting the calibration sync signal");
        check(worker_sem.wait(wv, m_options.timeout), "waiting for the calibration sync signal");
        const double b = ms_since(t0);
        // Worker signal -> primary.
        t0 = Clock::now();
        ++wv;
        ++pv;
        check(submit_empty(worker, nullptr,
                           worker_sem.submit_info(wv, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)),
              "submitting the calibration sync signal");
        Clock::time_point seen{};
        if (imported) {
            const auto w = imported->submit_info(wv, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
            check(submit_empty(primary, &w,
                               primary_sem.submit_info(pv, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)),
                  "submitting the calibration sync wait");
        } else {
            check(worker_sem.wait(wv, m_options.timeout),
                  "waiting for the calibration sync signal");
            seen = Clock::now();
            check(submit_empty(primary, nullptr,
                               primary_sem.submit_info(pv, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)),
                  "submitting the calibration sync primary signal");
        }
        check(primary_sem.wait(pv, m_options.timeout), "waiting for the calibration sync");
        if (i > 0) {
            base.push_back(b);
            total.push_back(ms_since(t0));
            if (!imported) {
                bridged.push_back(ms_since(seen));
            }
        }
    }
    // The worker's last signal is known done only through the primary (GPU-side): seen on the
    // worker's own semaphore too, its batch is complete before the semaphore is destroyed.
    check(worker_sem.wait(wv, m_options.timeout), "waiting for the calibration sync signal");
    if (!imported) {
        // Host bridge: from the host seeing the worker's signal to the primary's being seen.
        return bridged;
    }
    // GPU-side: the round trip through both devices less the worker's own.
    const double b = median(base);
    std::vector<double> out;
    for (const double t : total) {
        out.push_back(std::max(0.0, t - b));
    }
    return out;
}

} // namespace tandem::detail
