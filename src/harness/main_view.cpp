#include "harness/main_view.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "harness/adopted_primary.hpp"
#include "harness/run_scene_state.hpp"
#include "render/mesh_cache.hpp"
#include "render/renderer.hpp"
#include "render/scene_capture.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {
namespace {

// `snapshot` drawn with every sample moved by (x, y) texels of `extent`: both cameras'
// projections offset by the same clip-space translation, so motion vectors (now minus before)
// stay those of the unjittered cameras.
detail::FrameSnapshot jittered(const detail::FrameSnapshot& snapshot, float x, float y,
                               VkExtent2D extent) {
    detail::FrameSnapshot out = snapshot;
    if (!out.previous_camera) {
        out.previous_camera = out.camera;
    }
    glm::mat4 offset(1.0f);
    offset[3][0] = -2.0f * x / static_cast<float>(extent.width);
    offset[3][1] = -2.0f * y / static_cast<float>(extent.height);
    out.camera.projection = offset * out.camera.projection;
    out.previous_camera->projection = offset * out.previous_camera->projection;
    return out;
}

constexpr VkFormat k_color = VK_FORMAT_R8G8B8A8_UNORM;

VkDeviceSize rgba_bytes(VkExtent2D e) {
    return static_cast<VkDeviceSize>(e.width) * e.height * 4;
}

detail::Buffer readback_buffer(const detail::Device& device, VkDeviceSize size,
                               const std::string& name) {
    return detail::create_buffer(
        device, {size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, name});
}

void copy_to_buffer(VkCommandBuffer cmd, VkImage image, VkExtent2D extent, VkBuffer buffer) {
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {extent.width, extent.height, 1};
    vkCmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1, &region);
}

std::vector<std::uint8_t> buffer_pixels(const detail::Device& device, const detail::Buffer& b,
                                        VkExtent2D extent) {
    detail::invalidate_buffer(device, b);
    const auto* p = static_cast<const std::uint8_t*>(b.mapped);
    return {p, p + rgba_bytes(extent)};
}

} // namespace

struct MainView::State {
    struct Frame {
        detail::Image color;
        detail::Image depth;  // MainViewOutputs::ColorDepthMotion only
        detail::Image motion; // likewise
        std::unique_ptr<detail::RenderTarget> target;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        detail::Buffer main_readback;
        std::vector<detail::Buffer> lease_readback;
        std::vector<VkExtent2D> lease_extents;
        std::uint64_t value = 0;
        bool timed = false;
    };
    State(const PrimaryVulkan& primary, VkSemaphore timeline,
          const std::shared_ptr<const detail::SceneAssets>& assets, VkExtent2D extent,
          std::uint32_t max_leases, VkExtent2D max_lease_extent, std::uint32_t frames_in_flight,
          MainViewOutputs outputs);
    ~State();
    [[nodiscard]] std::uint64_t render(detail::FrameSnapshot snapshot,
                                       const MainFrameRequest& request);
    // The steps of render(); each that can fail sets m_error and answers false (or nullopt).
    [[nodiscard]] bool reuse_frame(Frame& f, std::size_t index, const MainFrameRequest& request,
                                   std::vector<detail::ExternalTexture>& external);
    [[nodiscard]] bool begin_commands(VkCommandBuffer cmd, std::uint32_t q0);
    [[nodiscard]] std::optional<VkImage>
    record_draw(Frame& f, const MainFrameRequest& request, detail::FrameSnapshot& snapshot,
                const std::vector<detail::ExternalTexture>& external);
    void record_readbacks(Frame& f, const MainFrameRequest& request, VkImage color);
    [[nodiscard]] bool end_commands(VkCommandBuffer cmd, std::uint32_t q0);
    [[nodiscard]] bool submit_frame(VkCommandBuffer cmd, const MainFrameRequest& request,
                                    std::uint64_t value);
    [[nodiscard]] VkResult wait(std::uint64_t value, std::chrono::nanoseconds timeout) const;
    [[nodiscard]] const Frame* frame_of(std::uint64_t value) const noexcept;
    void collect_timestamps(Frame& frame, std::size_t index);
    [[nodiscard]] std::optional<std::int64_t> end_host_ns(std::uint64_t value);

    // The primary as Tandem's own helpers (renderer, resources) take it: adopted, not owned.
    AdoptedPrimary m_primary;
    const detail::Device& m_device;
    VkSemaphore m_timeline;
    VkExtent2D m_extent;
    bool m_motion = false;
    // The previous frame's snapshot: where the motion vectors point back to.
    std::optional<detail::FrameSnapshot> m_previous;
    std::shared_ptr<detail::MeshCache> m_cache; // shared with scene-capture tasks on the primary
    detail::Renderer m_renderer;
    detail::CommandPool m_pool;
    detail::Handle<VkQueryPool> m_queries;
    double m_timestamp_period_ns = 0;
    std::uint64_t m_timestamp_mask = 0;
    // Places the timestamps on the host's clock (end_host_ns), refreshed every
    // k_calibration_frames frames against drift.
    std::optional<detail::TimestampCalibration> m_calibration;
    std::uint64_t m_calibrated_at = 0;
    std::vector<Frame> m_frames;
    std::uint64_t m_value = 0;
    std::vector<double> m_gpu_ms;
    std::string m_error;
};

MainView::State::State(const PrimaryVulkan& primary_vulkan, VkSemaphore timeline,
                       const std::shared_ptr<const detail::SceneAssets>& assets, VkExtent2D extent,
                       std::uint32_t max_leases, VkExtent2D max_lease_extent,
                       std::uint32_t frames_in_flight, MainViewOutputs outputs)
    : m_primary(primary_vulkan, "main view"), m_device(m_primary.device()), m_timeline(timeline),
      m_extent(extent), m_motion(outputs == MainViewOutputs::ColorDepthMotion),
      m_cache(detail::shared_mesh_cache(m_device, assets)),
      m_renderer(*m_cache, k_color, VK_FORMAT_D32_SFLOAT,
                 m_motion ? detail::RenderOutputs::ColorDepthMotion : detail::RenderOutputs::Color),
      m_pool(m_device, m_device.queue(detail::QueueRole::Main).family(), "main view pool") {
    const detail::Device& primary = m_device;
    const VkDevice dev = primary.handle();
    // Timestamps: only where the main queue's family writes them and the period is known.
    if (auto ts = detail::create_timestamp_pool(primary, detail::QueueRole::Main,
                                                2 * frames_in_flight, "main view timestamps")) {
        m_queries = std::move(ts->pool);
        m_timestamp_period_ns = ts->period_ns;
        m_timestamp_mask = ts->mask;
    }

    // Values must grow: continue from wherever an earlier signaller left the timeline.
    detail::vk_check(vkGetSemaphoreCounterValue(dev, timeline, &m_value),
                     "vkGetSemaphoreCounterValue primary timeline");
    for (std::uint32_t i = 0; i < frames_in_flight; ++i) {
        const std::string name = "main view " + std::to_string(i);
        Frame f;
        f.color = detail::create_image(
            primary,
            {extent.width, extent.height, k_color, k_main_colour_usage, name + " colour", {}});
        if (m_motion) {
            f.depth = detail::create_image(
                primary, {extent.width,
                          extent.height,
                          detail::k_depth_output_format,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                          name + " depth",
                          {}});
            f.motion = detail::create_image(
                primary, {extent.width,
                          extent.height,
                          detail::k_motion_format,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                          name + " motion",
                          {}});
        }
        f.target = std::make_unique<detail::RenderTarget>(m_renderer, extent, 4096,
                                                          std::max(1u, max_leases), name);
        f.cmd = m_pool.allocate(name + " commands");
        f.main_readback = readback_buffer(primary, rgba_bytes(extent), name + " readback");
        for (std::uint32_t l = 0; l < max_leases; ++l) {
            f.lease_readback.push_back(
                readback_buffer(primary, rgba_bytes(max_lease_extent),
                                name + " lease readback " + std::to_string(l)));
        }
        m_frames.push_back(std::move(f));
    }
}

MainView::State::~State() {
    (void)wait(m_value, std::chrono::seconds(10));
}

VkResult MainView::State::wait(std::uint64_t value, std::chrono::nanoseconds timeout) const {
    return detail::wait_timeline(m_device, m_timeline, value, timeout,
                                 "vkWaitSemaphores main view");
}

void MainView::State::collect_timestamps(Frame& frame, std::size_t index) {
    if (!frame.timed || !m_queries) {
        return;
    }
    frame.timed = false;
    std::uint64_t stamps[2] = {0, 0};
    const VkResult r = detail::vk_status(
        vkGetQueryPoolResults(m_device.handle(), m_queries.get(),
                              static_cast<std::uint32_t>(2 * index), 2, sizeof stamps, stamps,
                              sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT),
        "vkGetQueryPoolResults main view");
    if (r == VK_SUCCESS) {
        const std::uint64_t ticks = (stamps[1] - stamps[0]) & m_timestamp_mask;
        m_gpu_ms.push_back(static_cast<double>(ticks) * m_timestamp_period_ns * 1e-6);
    }
}

// Waits for the frame last rendered into `f` and collects its timestamps; checks that the
// request's leases fit the read-back buffers, and names them as the draw's external textures.
bool MainView::State::reuse_frame(Frame& f, std::size_t index, const MainFrameRequest& request,
                                  std::vector<detail::ExternalTexture>& external) {
    if (wait(f.value, std::chrono::seconds(10)) != VK_SUCCESS) {
        m_error = "the primary did not finish an earlier main view frame within 10 s";
        return false;
    }
    collect_timestamps(f, index);
    if (request.read_leases && request.leases.size() > f.lease_readback.size()) {
        m_error = "more leases than the main view can read back";
        return false;
    }
    for (const Lease& lease : request.leases) {
        external.push_back({lease.view, lease.layout});
        if (request.read_leases && rgba_bytes(lease.extent) > f.lease_readback[0].size) {
            m_error = "a leased image is larger than the main view's read-back buffer";
            return false;
        }
    }
    return true;
}

// Resets and begins `cmd`, with the frame's first timestamp (queries q0 and q0 + 1).
bool MainView::State::begin_commands(VkCommandBuffer cmd, std::uint32_t q0) {
    if (detail::vk_status(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer main view") !=
        VK_SUCCESS) {
        m_error = "vkResetCommandBuffer failed";
        return false;
    }
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (detail::vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer main view") !=
        VK_SUCCESS) {
        m_error = "vkBeginCommandBuffer failed";
        return false;
    }
    if (m_queries) {
        vkCmdResetQueryPool(cmd, m_queries.get(), q0, 2);
        vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, m_queries.get(), q0);
    }
    m_device.begin_label(cmd, "main view");
    return true;
}

// Records the draw of `snapshot` (given the previous frame's camera where motion is drawn) into
// the request's targets or the frame's own, left for copies. Returns the colour image drawn, or
// nullopt when the renderer refused (m_error says why; the command buffer is ended).
std::optional<VkImage>
MainView::State::record_draw(Frame& f, const MainFrameRequest& request,
                             detail::FrameSnapshot& snapshot,
                             const std::vector<detail::ExternalTexture>& external) {
    VkCommandBuffer cmd = f.cmd;
    const MainFrameTargets* into = request.targets;
    detail::ColorTarget color;
    // The caller's images where it gave them, else the frame's own.
    const auto pick = [into](VkImage theirs, VkImageView their_view, const detail::Image& own) {
        return theirs != VK_NULL_HANDLE ? std::pair(theirs, their_view)
                                        : std::pair(own.get(), own.view.get());
    };
    std::tie(color.image, color.view) =
        pick(into != nullptr ? into->color : VK_NULL_HANDLE,
             into != nullptr ? into->color_view : VK_NULL_HANDLE, f.color);
    color.extent = m_extent;
    // previous_stage/access: the defaults (everything before), contents discarded.
    color.final_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    color.final_stage = VK_PIPELINE_STAGE_2_COPY_BIT;
    color.final_access = VK_ACCESS_2_TRANSFER_READ_BIT;
    detail::RenderStatus status = detail::RenderStatus::Ok;
    if (m_motion && m_previous) {
        snapshot = detail::with_previous(std::move(snapshot), *m_previous);
    }
    // Drawn with its samples moved by the request's jitter (the unjittered one is kept as the
    // next frame's previous).
    std::optional<detail::FrameSnapshot> moved;
    if (request.jitter_x != 0.0f || request.jitter_y != 0.0f) {
        moved = jittered(snapshot, request.jitter_x, request.jitter_y, m_extent);
    }
    const detail::FrameSnapshot& drawn = moved ? *moved : snapshot;
    if (m_motion) {
        detail::MotionTargets motion;
        std::tie(motion.depth_image, motion.depth_view) =
            pick(into != nullptr ? into->depth : VK_NULL_HANDLE,
                 into != nullptr ? into->depth_view : VK_NULL_HANDLE, f.depth);
        std::tie(motion.motion_image, motion.motion_view) =
            pick(into != nullptr ? into->motion : VK_NULL_HANDLE,
                 into != nullptr ? into->motion_view : VK_NULL_HANDLE, f.motion);
        // Left for Tandem's copy of them as task inputs (and for readers of frame_images()).
        motion.final_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        motion.final_stage = VK_PIPELINE_STAGE_2_COPY_BIT;
        motion.final_access = VK_ACCESS_2_TRANSFER_READ_BIT;
        status = m_renderer.record(cmd, *f.target, color, motion, drawn, external);
    } else {
        status = m_renderer.record(cmd, *f.target, color, drawn, external);
    }
    if (status != detail::RenderStatus::Ok) {
        m_device.end_label(cmd);
        (void)vkEndCommandBuffer(cmd);
        m_error =
            std::string("the main view's render was refused (") + detail::to_string(status) + ")";
        return std::nullopt;
    }
    return color.image;
}

// Records the copies to host memory the request asks for: the colour image drawn and every
// leased image, each lease back in its layout before the frame's signal.
void MainView::State::record_readbacks(Frame& f, const MainFrameRequest& request, VkImage color) {
    VkCommandBuffer cmd = f.cmd;
    bool host_reads = false;
    if (request.read_main) {
        copy_to_buffer(cmd, color, m_extent, f.main_readback.get());
        host_reads = true;
    }
    f.lease_extents.clear();
    if (request.read_leases) {
        for (std::size_t i = 0; i < request.leases.size(); ++i) {
            const Lease& lease = request.leases[i];
            // After the fragment shader's reads: to TRANSFER_SRC, copy, and back to the lease's
            // layout before the signal (the lease contract).
            detail::image_barrier(cmd, lease.image, lease.layout,
                                  VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
            copy_to_buffer(cmd, lease.image, lease.extent, f.lease_readback[i].get());
            detail::image_barrier(cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                  lease.layout, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
            f.lease_extents.push_back(lease.extent);
            host_reads = true;
        }
    }
    if (host_reads) {
        detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    }
}

// Ends `cmd` with the frame's last timestamp.
bool MainView::State::end_commands(VkCommandBuffer cmd, std::uint32_t q0) {
    m_device.end_label(cmd);
    if (m_queries) {
        vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries.get(), q0 + 1);
    }
    if (detail::vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer main view") != VK_SUCCESS) {
        m_error = "vkEndCommandBuffer failed";
        return false;
    }
    return true;
}

// Submits `cmd` on the main queue, waiting for the leases and the caller's semaphores, and
// signalling the primary timeline at `value` and the caller's semaphores.
bool MainView::State::submit_frame(VkCommandBuffer cmd, const MainFrameRequest& request,
                                   std::uint64_t value) {
    // One wait per semaphore, at the largest value leased from it; then the caller's.
    std::vector<VkSemaphoreSubmitInfo> waits;
    for (const Lease& lease : request.leases) {
        auto it = std::find_if(waits.begin(), waits.end(), [&](const VkSemaphoreSubmitInfo& w) {
            return w.semaphore == lease.wait_semaphore;
        });
        if (it == waits.end()) {
            waits.push_back(detail::semaphore_submit_info(lease.wait_semaphore, lease.wait_value,
                                                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
        } else {
            it->value = std::max(it->value, lease.wait_value);
        }
    }
    waits.insert(waits.end(), request.waits.begin(), request.waits.end());
    std::vector<VkSemaphoreSubmitInfo> signals{
        detail::semaphore_submit_info(m_timeline, value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)};
    signals.insert(signals.end(), request.signals.begin(), request.signals.end());
    VkCommandBufferSubmitInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cmd_info.commandBuffer = cmd;
    VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submit.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
    submit.pWaitSemaphoreInfos = waits.data();
    submit.commandBufferInfoCount = 1;
    submit.pCommandBufferInfos = &cmd_info;
    submit.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
    submit.pSignalSemaphoreInfos = signals.data();
    const VkResult r = m_device.queue(detail::QueueRole::Main).submit({&submit, 1});
    if (r != VK_SUCCESS) {
        m_error = std::string("the main view's submit failed (") + tandem::to_string(r) + ")";
        return false;
    }
    return true;
}

std::uint64_t MainView::State::render(detail::FrameSnapshot snapshot,
                                      const MainFrameRequest& request) {
    const std::size_t index = m_value % m_frames.size();
    Frame& f = m_frames[index];
    std::vector<detail::ExternalTexture> external;
    if (!reuse_frame(f, index, request, external)) {
        return 0;
    }
    const auto q0 = static_cast<std::uint32_t>(2 * index);
    if (!begin_commands(f.cmd, q0)) {
        return 0;
    }
    const std::optional<VkImage> color = record_draw(f, request, snapshot, external);
    if (!color) {
        return 0;
    }
    record_readbacks(f, request, *color);
    if (!end_commands(f.cmd, q0)) {
        return 0;
    }
    const std::uint64_t value = m_value + 1;
    if (!submit_frame(f.cmd, request, value)) {
        return 0;
    }
    m_value = value;
    f.value = value;
    if (m_motion) {
        m_previous = std::move(snapshot);
    }
    f.timed = static_cast<bool>(m_queries);
    return value;
}

std::optional<std::int64_t> MainView::State::end_host_ns(std::uint64_t value) {
    constexpr std::uint64_t k_calibration_frames = 64;
    const Frame* f = frame_of(value);
    if (f == nullptr || !f->timed || !m_queries || !m_device.has_host_timed_queries()) {
        return std::nullopt;
    }
    if (!m_calibration || value >= m_calibrated_at + k_calibration_frames) {
        m_calibration = m_device.calibrate_timestamps();
        m_calibrated_at = value;
    }
    if (!m_calibration) {
        return std::nullopt;
    }
    const auto index = static_cast<std::uint32_t>(f - m_frames.data());
    std::uint64_t end = 0;
    if (vkGetQueryPoolResults(m_device.handle(), m_queries.get(), 2 * index + 1, 1, sizeof end,
                              &end, sizeof end, VK_QUERY_RESULT_64_BIT) != VK_SUCCESS) {
        return std::nullopt; // not available: the frame has not finished
    }
    return m_calibration->host_ns_of(end,
                                     static_cast<std::uint32_t>(std::popcount(m_timestamp_mask)));
}

const MainView::State::Frame* MainView::State::frame_of(std::uint64_t value) const noexcept {
    for (const auto& f : m_frames) {
        if (f.value == value) {
            return &f;
        }
    }
    return nullptr;
}

MainFrameImages MainView::frame_images(std::uint64_t value) const {
    const State::Frame* f = m_state->frame_of(value);
    if (f == nullptr) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The main view frame " + std::to_string(value) + " was reused",
                    "Take a frame's images before rendering frames_in_flight further frames");
    }
    return {f->color.get(), f->depth.get(), f->motion.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            f->color.view.get()};
}

std::vector<std::uint8_t> MainView::main_pixels(std::uint64_t value) const {
    const State::Frame* f = m_state->frame_of(value);
    if (f == nullptr) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The main view frame " + std::to_string(value) + " was reused",
                    "Read a frame's pixels before rendering further frames");
    }
    return buffer_pixels(m_state->m_device, f->main_readback, m_state->m_extent);
}

std::vector<std::uint8_t> MainView::lease_pixels(std::uint64_t value, std::size_t lease) const {
    const State::Frame* f = m_state->frame_of(value);
    if (f == nullptr || lease >= f->lease_extents.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The main view frame " + std::to_string(value) + " read no lease " +
                        std::to_string(lease),
                    "Ask for read_leases in that frame");
    }
    return buffer_pixels(m_state->m_device, f->lease_readback[lease], f->lease_extents[lease]);
}

MainView::MainView(const Runtime& runtime, const RunScene& scene, VkExtent2D extent,
                   std::uint32_t max_leases, VkExtent2D max_lease_extent,
                   std::uint32_t frames_in_flight, MainViewOutputs outputs)
    : m_state(std::make_unique<State>(runtime.primary_vulkan(), runtime.primary_timeline(),
                                      scene.state().inputs.scene.shared_assets(), extent,
                                      max_leases, max_lease_extent, frames_in_flight, outputs)) {}

MainView::~MainView() = default;

std::uint64_t MainView::render(const RunScene& scene, const MainFrameRequest& request) {
    return m_state->render(detail::main_snapshot(scene.state().inputs, request.shown), request);
}

VkResult MainView::wait(std::uint64_t value, std::chrono::nanoseconds timeout) const {
    return m_state->wait(value, timeout);
}

const std::string& MainView::last_error() const noexcept {
    return m_state->m_error;
}

VkExtent2D MainView::extent() const noexcept {
    return m_state->m_extent;
}

bool MainView::has_timestamps() const noexcept {
    return m_state->m_timestamp_period_ns > 0;
}

const std::vector<double>& MainView::gpu_ms() const noexcept {
    return m_state->m_gpu_ms;
}

std::optional<std::int64_t> MainView::end_host_ns(std::uint64_t value) {
    return m_state->end_host_ns(value);
}

} // namespace tandem::harness
