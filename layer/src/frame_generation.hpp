// Frame generation on a second GPU for a program that knows nothing of Tandem.
//
// DeviceGeneration embeds a tandem::Runtime on the program's own device (tandem/embedding.hpp),
// sharing the queue the program presents on under that queue's lock in the layer, with Tandem's
// queue calls looked up through the next layer's vkGetDeviceProcAddr (EmbedInfo), and a worker
// of its own (another GPU, or where there is one device the same one opened again).
// SwapchainGeneration does the frames of one swapchain. At each of the program's presents:
//   1. one batch on the program's queue waits for its wait semaphores and signals the layer's
//      timeline (Tandem's inputs name timeline semaphores);
//   2. the presented image goes to the worker as the input of one interpolate-from-colour task
//      per generated frame (tandem/post.hpp: t = 1/2, or 1/3 and 2/3 at 3x), each job making the
//      frame between the previous present and this one;
//   3. the frame goes to the swapchain's presenter thread, and the call returns: the presenter
//      sends it out once the frames generated between it and the one before are ready (each
//      presented first), or without them once the program presented again (a generated frame
//      not ready then is skipped, never waited for, unless TANDEM_FRAMEGEN_WAIT_MS asks for a
//      bounded wait), so a slow worker costs the program nothing but the frames it does not get.
// So a real frame reaches the display after its generated frame's pass, and generated and real
// frames go out back to back (the present mode paces them: FIFO shows each for a refresh). The
// presenter and the program's own vkAcquireNextImageKHR take turns on the swapchain (acquire()).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <vulkan/vulkan.h>

#include "tandem/runtime.hpp"

#include "dispatch_table.hpp"
#include "display_queue.hpp"
#include "frame_check.hpp"
#include "frame_copy.hpp"
#include "host_frame.hpp"
#include "scaled_swapchain.hpp"

namespace tandem::layer {

struct DeviceRecord;
struct InstanceRecord;

// What a swapchain's generation measured, from its first task's TaskStats when it ended.
struct GenerationSummary {
    std::string worker;                   // the worker device's name
    std::string transfer_path;            // how outputs came back (TransferPath)
    std::string input_path;               // how inputs went to the worker
    std::uint64_t jobs = 0;               // jobs accepted
    double pass_us_p50 = 0;               // the worker's GPU time per job (the timed ones)
    double input_copy_us_p50 = 0;         // the primary's copy of each presented image
    bool input_copied_by_compute = false; // that copy is a compute dispatch (else the command)
    bool layer_copied_by_compute = false; // the layer's copies into the swapchain, likewise
    // Where its frames went out: "program" (the program's device) or "worker".
    std::string display = "program";
    std::string tandem_queue = "shared"; // DeviceGeneration::tandem_queue
    // The program's frames copied into Tandem's inputs on its device, by every task.
    std::uint64_t input_copies = 0;
    // Where a frame task's job spends the time from its submit (TaskStats' latencies, p50, us):
    // until its batch went to the worker's queue, until its work there was done, and until the
    // runtime saw its output ready to lease.
    double job_submitted_us_p50 = 0;
    double job_done_us_p50 = 0;
    double job_ready_us_p50 = 0;
};

// What generation did on one device, for the report.
struct GenerationCounts {
    std::atomic<std::uint64_t> generated{0}; // generated frames presented
    std::atomic<std::uint64_t> skipped{0};   // generated frames not ready (or not presentable)
    // Scaling: real frames presented upscaled by the worker, and by the primary's blit (the
    // worker's frame not there in time, or no worker).
    std::atomic<std::uint64_t> upscaled{0};
    std::atomic<std::uint64_t> blitted{0};
    // On the worker's display: real frames the worker did not have in time, not shown.
    std::atomic<std::uint64_t> real_not_shown{0};
    std::atomic<std::uint32_t> dumped{0}; // frames (verify mode: comparisons) dumped
    std::atomic<bool> worker_lost{false}; // a worker was lost: frames passed through since
    // Swapchains whose display the program's device took back from the lost worker.
    std::atomic<std::uint64_t> displays_taken_back{0};
    // The program's first and last vkQueuePresentKHR (steady clock, ns; 0: none yet).
    std::atomic<std::int64_t> first_present_ns{0};
    std::atomic<std::int64_t> last_present_ns{0};
    mutable std::mutex summary_mutex;
    GenerationSummary summary;      // the last swapchain's that ended
    std::string worker_lost_reason; // the runtime's sentence, when worker_lost
    VerifyTotals verify;            // verify mode (TANDEM_FRAMEGEN_VERIFY)
    // Scaling: the last scaled swapchain's sizes, the program's and the window's.
    struct ScalingExtents {
        VkExtent2D program{};
        VkExtent2D window{};
    };
    std::optional<ScalingExtents> scaling;
    // The delay the layer added to each real frame: from the program's vkQueuePresentKHR of it
    // to the layer's present of it returning, in us. Guarded by summary_mutex.
    SampleRing delays_us;
    // From each generated frame's present to the next present (the real frame's, or at 3x the
    // next generated one's), in us: how evenly the presenter spaces them.
    SampleRing gaps_us;
    // The GPU time of each of the layer's copies of a worker's frame (generated, or a real frame
    // upscaled) into a swapchain image, on the program's device, in us.
    SampleRing copies_us;
    // From the program's vkQueuePresentKHR of a real frame to the layer's present of the frame
    // generated before it returning, in us: how long a generated frame takes to go out.
    SampleRing generated_delays_us;
    // Of that, from the program's present to the presenter taking the frame up, and to its
    // seeing the generated frame's output ready (in us).
    SampleRing presenter_started_us;
    SampleRing generated_noticed_us;

    void note_present() noexcept;
    // A sample into one of the rings above, under summary_mutex.
    void note(SampleRing& ring, double us);
};

class DeviceGeneration {
public:
    // Embeds the runtime and opens its worker. Throws tandem::Error (or std::exception) when
    // Tandem cannot run there; the caller then passes frames through and says why.
    // `queue` (family, index) is the program's, shared under `queue_mutex`: the layer presents
    // on it, and Tandem submits to it too unless `tandem_queue` names a queue of that family the
    // layer added for Tandem alone (DeviceRecord::spare_queues).
    DeviceGeneration(const DeviceRecord& device, VkQueue queue, std::uint32_t queue_family,
                     std::uint32_t queue_index, std::shared_ptr<std::mutex> queue_mutex,
                     std::optional<std::uint32_t> tandem_queue);
    // Destroys the runtime (it waits for its devices): before the program's vkDestroyDevice,
    // whose loader call holds a lock that Tandem's own vkDestroyDevice of its worker takes; or
    // inside it, the worker left open (Runtime::leave_devices_open), for a program that
    // destroys its device before its swapchains.
    ~DeviceGeneration();
    DeviceGeneration(const DeviceGeneration&) = delete;
    DeviceGeneration& operator=(const DeviceGeneration&) = delete;

    [[nodiscard]] Runtime& runtime() noexcept { return *m_runtime; }
    [[nodiscard]] VkDevice device() const noexcept { return m_device; }
    [[nodiscard]] VkQueue queue() const noexcept { return m_queue; }
    [[nodiscard]] std::uint32_t queue_family() const noexcept { return m_queue_family; }
    [[nodiscard]] const DeviceDispatch& dispatch() const noexcept { return m_dispatch; }
    [[nodiscard]] const std::string& worker_name() const noexcept { return m_worker_name; }
    // Tandem submits to a queue of its own ("own") or the program's ("shared").
    [[nodiscard]] const char* tandem_queue() const noexcept {
        return m_own_queue ? "own" : "shared";
    }
    // The queue the layer added for Tandem and the lock Tandem takes around its calls there
    // (the program's vkDeviceWaitIdle waits for it under that lock); nothing when Tandem shares
    // the program's queue.
    struct OwnQueue {
        VkQueue queue = VK_NULL_HANDLE;
        std::shared_ptr<std::mutex> mutex;
    };
    [[nodiscard]] std::optional<OwnQueue> own_queue() const {
        if (!m_own_queue) {
            return std::nullopt;
        }
        const DeviceVulkan vulkan = m_runtime->primary_vulkan();
        return OwnQueue{vulkan.queue, vulkan.queue_mutex};
    }
    [[nodiscard]] const VkPhysicalDeviceMemoryProperties& memory() const noexcept {
        return m_display->memory();
    }

    // The compute copy's pipeline on the device (frame_copy.hpp), made by the first swapchain
    // that asks and kept until the device's generation ends. Throws std::runtime_error when it
    // cannot be made (the next call tries again). Any thread.
    [[nodiscard]] const FrameCopyPipeline& frame_copy_pipeline() {
        return m_display->frame_copy_pipeline();
    }

    // The next value the layer signals the runtime's primary timeline to (leases' reads done).
    [[nodiscard]] std::uint64_t next_release_value() noexcept {
        return m_display->next_release_value();
    }
    // The next layer's vkQueueSubmit2 / vkQueuePresentKHR / vkQueueWaitIdle on the queue, under
    // its lock (the program's own calls and Tandem's take it too).
    [[nodiscard]] VkResult submit(const VkSubmitInfo2& batch) { return m_display->submit(batch); }
    [[nodiscard]] VkResult present(const VkPresentInfoKHR& info) {
        return m_display->present(info);
    }
    VkResult wait_idle() { return m_display->wait_idle(); }
    // The program's queue as a display (its swapchains' frames go out there).
    [[nodiscard]] DisplayQueue& program_display() noexcept { return *m_display; }
    // The worker's main queue as a display (display = worker), made at the first call: null,
    // with `why` set, where the worker cannot present to `surface` (its device has no
    // VK_KHR_swapchain, or its queue cannot present there). Any thread.
    [[nodiscard]] DisplayQueue* worker_display(VkSurfaceKHR surface, std::string& why);
    // The worker's device record (the layer's, whose functions its swapchain is made with), once
    // worker_display() made the display.
    [[nodiscard]] std::shared_ptr<DeviceRecord> worker_record() const;

private:
    bool m_own_queue = false;
    VkDevice m_device = VK_NULL_HANDLE;
    VkQueue m_queue = VK_NULL_HANDLE;
    std::uint32_t m_queue_family = 0;
    std::shared_ptr<std::mutex> m_queue_mutex;
    DeviceDispatch m_dispatch;
    std::shared_ptr<const InstanceRecord> m_instance;
    std::string m_worker_name;
    std::unique_ptr<DisplayQueue> m_display; // its memory types and queue's timestamps too
    mutable std::mutex m_worker_display_mutex;
    std::shared_ptr<DeviceRecord> m_worker_record;
    std::unique_ptr<DisplayQueue> m_worker_display;
    std::unique_ptr<Runtime> m_runtime;
};

// The tasks a replaced swapchain hands to the one that replaces it, and the size they have.
struct KeptTasks {
    std::vector<TaskId> tasks;
    VkExtent2D extent{};
    // Scaled: the upscales (of the program's frames, and of each frame task's), kept only for a
    // swapchain of the same sizes, and the program's size.
    TaskId upscale;
    std::vector<TaskId> frame_upscales;
    // On the worker's display, scaled: the upscale of the real frame's task's output (`upscale`
    // is then that task).
    TaskId real_upscale;
    VkExtent2D program_extent{};
    // Every task, the readers of a chain before what they read (the order to unregister them).
    [[nodiscard]] std::vector<TaskId> all() const;
};

// True for the swapchain formats the worker's frames (RGBA8) go into byte for byte: 8-bit RGBA
// and BGRA, UNORM or SRGB (the interpolation treats the channels alike). Frames of any other
// format pass through, and a scaled one is upscaled by the primary.
[[nodiscard]] bool worker_takes_format(VkFormat format) noexcept;

class SwapchainGeneration {
public:
    // `multiplier` 2 or 3: presented frames per real frame. Throws std::runtime_error (with a
    // sentence) when the swapchain cannot be used; its frames then pass through.
    // Real frames presented are counted in `real_presented`. `present_mode` is the swapchain's:
    // where the display does not pace the presents (mailbox, immediate), the presenter spaces
    // a real frame and the generated ones before it evenly over the program's frame.
    // `scaled`: the program renders into its images at a smaller size (scaled_swapchain.hpp);
    // `extent` is then the window's, each presented image is upscaled to it on the worker, frames
    // are generated at the program's size and each is upscaled by a task that reads it as a
    // chain; `kept` is empty or a scaled swapchain's of the same sizes.
    // `display`: where the frames go out, `swapchain` being made there; null: the program's
    // device. On the worker's (display = worker), `scaled` holds the program's images at the
    // swapchain's size: a task of the layer's own passes each presented frame to the worker
    // unchanged, the frame tasks keep their outputs there, and the worker copies both into its
    // swapchain and presents them (verify mode is not taken there).
    SwapchainGeneration(DeviceGeneration& device, VkSwapchainKHR swapchain, VkFormat format,
                        VkExtent2D extent, int multiplier, GenerationCounts& counts,
                        std::atomic<std::uint64_t>& real_presented,
                        VkPresentModeKHR present_mode = VK_PRESENT_MODE_FIFO_KHR,
                        KeptTasks kept = {}, std::shared_ptr<ScaledSwapchain> scaled = nullptr,
                        bool rgba8_readable = false, bool rgba8_writable = false,
                        DisplayQueue* display = nullptr);
    // Presents what is still queued, then stops the presenter: the caller flush()es first.
    ~SwapchainGeneration();
    SwapchainGeneration(const SwapchainGeneration&) = delete;
    SwapchainGeneration& operator=(const SwapchainGeneration&) = delete;

    // The program's present of one image of this swapchain (a present of this swapchain alone,
    // no pNext): queued for the presenter. Returns the result of the presenter's last present
    // (VK_SUCCESS before the first), as a later present would report a swapchain out of date.
    [[nodiscard]] VkResult present(const VkPresentInfoKHR& info);
    // The tasks of a swapchain replaced by one of the same format, for the new one (its
    // constructor's `kept`). At the same size they are prepared already, and the frame before
    // the new swapchain's first is the old one's last; at another size the new one reconfigures
    // them (Runtime::reconfigure) instead of registering new tasks. This one no longer
    // unregisters them.
    [[nodiscard]] KeptTasks take_tasks();
    [[nodiscard]] VkExtent2D extent() const noexcept { return m_extent; }
    // The size the program renders at: the swapchain's, or the smaller one when scaled.
    [[nodiscard]] VkExtent2D program_extent() const noexcept {
        return m_scaled ? m_scaled->program_extent() : m_extent;
    }
    [[nodiscard]] bool scaled() const noexcept { return m_scaled != nullptr; }
    // The worker presents this swapchain's frames (display = worker).
    [[nodiscard]] bool on_worker() const noexcept { return m_display.on_worker(); }
    [[nodiscard]] VkFormat format() const noexcept { return m_format; }
    // Presents what is queued (with its generated frames), then waits for the queue: before the
    // swapchain is replaced or destroyed, or before a present this class does not take (another
    // swapchain in the same call, a pNext chain).
    void flush();
    // The program's vkAcquireNextImageKHR (next: the next layer's), taking turns with the
    // presenter on the swapchain: tried in slices of at most 1 ms, the swapchain's lock held
    // for each, so that the presenter can free an image meanwhile. The program's timeout holds.
    [[nodiscard]] VkResult acquire(std::uint64_t timeout, VkSemaphore semaphore, VkFence fence,
                                   std::uint32_t* index);
    // At the process's exit: drops the frames queued, and stops the presenter after at most the
    // present it is making (it waits for nothing more). Nothing is destroyed; frames the program
    // presents afterwards are dropped too.
    void stop_for_exit() noexcept;

private:
    struct Held {
        std::uint32_t image = 0;
        std::uint64_t frame = 0; // the program's presents before this one, on this swapchain
        // Verify mode: a frame held back from the worker (the truth its neighbours' generated
        // frame is compared with), or one whose job generated the held-back frame before it.
        bool held_back = false;
        bool verifiable = false;
        std::chrono::steady_clock::time_point presented; // the program's present call
        std::vector<std::uint64_t> generations;          // per task; 0: no frame generated for it
        // Scaling: the upscale task's generation for this frame (0: none was accepted), and the
        // points after which the program's image is read (its waits, Tandem's copy of it).
        std::uint64_t upscaled = 0;
        std::uint64_t ready_value = 0;
        std::uint64_t inputs_released = 0;
    };
    struct CopySlot {
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        VkSemaphore acquired = VK_NULL_HANDLE; // binary: the generated frame's swapchain image
        std::uint64_t done_value = 0;          // m_done reaches it once the slot is free
        bool timed = false; // its last copy wrote its two timestamps (m_copy_times)
    };

    // The host copies of frames and the command buffer that makes them (verify mode, the dump),
    // made at the first check.
    struct Checks {
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        std::vector<VkSemaphore> checked; // binary, per image: a real frame copied, presentable
        std::unique_ptr<HostFrame> real;
        std::unique_ptr<HostFrame> previous; // verify only: the frame before the held-back one
        std::unique_ptr<HostFrame> truth;    // verify only: the held-back frame
        std::unique_ptr<HostFrame> generated;
        std::unique_ptr<HostFrame> rendered; // scaled: the program's frame, at its size
        bool dump_failed = false;            // the dump's folder could not be written: logged once
    };

    // Queues a frame the program presented for the presenter (step 4 above); returns the
    // presenter's last result.
    [[nodiscard]] VkResult queue_for_presenter(Held next);
    void run_presenter();
    // Stops the presenter once it presented what is queued, or (`drop_queued`) after at most the
    // present it is making, the rest dropped.
    void stop_presenter(bool drop_queued) noexcept;
    void present_held(const Held& held);
    // Pacing (non-FIFO present modes): notes the program's frame interval, and waits until the
    // next present is its share of a frame after the one before, or until the program presented
    // again (the presenter is behind then and does not wait).
    void note_program_frame(std::chrono::steady_clock::time_point presented);
    void pace_next_present();
    // Verify mode and the dump, on the presenter thread before the real frame goes out: copies
    // it to the host (returning the semaphore its present waits for then), compares the
    // generated frame with the held-back one, writes the dump's files.
    [[nodiscard]] VkSemaphore check_real(const Held& held, VkSemaphore ready);
    void verify_generated(const Held& held);
    // Copies the task's output `generation` to checks.generated; false when it is not there.
    [[nodiscard]] bool read_generated(std::size_t task, std::uint64_t generation);
    // Submits the check command buffer (recorded) and waits on the host for it to complete.
    // `also`: a second point waited for (none when its semaphore is null or its value 0).
    [[nodiscard]] bool run_check(VkSemaphore wait, std::uint64_t wait_value, VkSemaphore signal,
                                 std::uint64_t release_value, TimelinePoint also = {});
    // Waits on the host (up to 10 s) for m_done to reach `value`: false when it did not.
    [[nodiscard]] bool wait_done(std::uint64_t value);
    // Claims the next dump index; empty when the dump is off, full or failed.
    [[nodiscard]] std::optional<std::uint32_t> claim_dump();
    void dump(std::uint32_t index, const char* kind, std::span<const std::uint8_t> texels,
              std::optional<VkExtent2D> extent = std::nullopt); // unset: the swapchain's
    // Scaled, with the dump on: the program's own frame, at its size, as "rendered".
    void dump_rendered(const Held& held);
    void note_submit_failure(const SubmitResult& result);
    // The worker lost, `reason` saying how: frames pass through from now on (logged once).
    void note_worker_lost(const std::string& reason);
    // A call on the display's queue or swapchain: VK_ERROR_DEVICE_LOST on the worker's display
    // is the worker lost.
    void note_display_result(VkResult result, const char* call);
    // Waits up to `longest` for the tasks to be prepared (once they are, returns at once).
    void wait_until_prepared(std::chrono::milliseconds longest);
    // The description of the task that makes the k-th generated frame (k from 0) of each real one
    // (scaled: at the program's size).
    [[nodiscard]] TaskDesc frame_task(std::size_t k) const;
    // Scaled: an upscale from the program's size to the window's, of the program's frame (no
    // producer) or of a frame task's output read in place (a chain).
    [[nodiscard]] TaskDesc upscale_desc(const std::string& name, TaskId producer) const;
    // The task whose output shows the k-th generated frame: the frame task, or its upscale.
    [[nodiscard]] TaskId shown_task(std::size_t k) const {
        return upscales_frames() ? m_frame_upscales[k] : m_tasks[k];
    }
    // Scaled: each generated frame is upscaled by a task that chains from its frame task. (On
    // the worker's display unscaled the program's images are the swapchain's size: nothing is
    // upscaled.)
    [[nodiscard]] bool upscales_frames() const noexcept {
        return m_scaled != nullptr && (m_scaled->program_extent().width != m_extent.width ||
                                       m_scaled->program_extent().height != m_extent.height);
    }
    // The task whose output shows the real frame: the upscale of it (scaled), or on the worker's
    // display the real frame's task itself.
    [[nodiscard]] TaskId shown_real() const noexcept {
        return m_real_upscale ? m_real_upscale : m_upscale;
    }
    // On the worker's display: the task that passes each presented frame to the worker.
    [[nodiscard]] TaskDesc real_frame_desc() const;
    // Waits for the program's queue, and for the worker's when it is the display.
    void wait_idle();
    // A kept task of another size takes this swapchain's (`reshaping`), or a new one stands in
    // for it where the runtime refuses that.
    void reshape(std::size_t k);
    // True once task k may take this swapchain's images: prepared, and reshaped where it was.
    [[nodiscard]] bool takes_frames(std::size_t k);
    // Waits until the task published `generation`: until then, or until the program presented
    // again and TANDEM_FRAMEGEN_WAIT_MS has passed, or the task failed, or 250 ms.
    // `real_on_worker`: a real frame the worker presents, which waits on (FIFO: up to 250 ms or
    // TANDEM_FRAMEGEN_WAIT_MS; mailbox and immediate: until the program presented twice more).
    void wait_for_output(TaskId task, std::uint64_t generation,
                         std::chrono::steady_clock::time_point presented,
                         bool real_on_worker = false);
    // Copies the task's output `generation` into an image of the swapchain and presents it
    // (`real`: a real frame, upscaled; else a generated one): the present's result, or nothing
    // when it was not presented (not ready, no image free, the copy not submitted).
    [[nodiscard]] std::optional<VkResult> present_output(TaskId task, std::uint64_t generation,
                                                         bool real);
    // True when it was presented (else counted skipped).
    [[nodiscard]] bool present_generated(std::size_t k, std::uint64_t generation);
    // Scaling: the real frame, the worker's upscale of it or else the primary's blit.
    void present_scaled_real(const Held& held);
    // The host copies of frames (verify mode, the dump), made at the first use; false when they
    // cannot be made (logged).
    [[nodiscard]] bool make_checks();
    // A semaphore on the display's device, and one on the program's.
    [[nodiscard]] VkSemaphore make_semaphore(VkSemaphoreType type);
    [[nodiscard]] VkSemaphore make_program_semaphore(VkSemaphoreType type);
    // The copy timer: two timestamps per copy slot, where the queue has timestamps. Reads a
    // slot's last copy's time once it is done (into GenerationCounts::copies_us).
    void make_copy_timer();
    void note_copy_time(std::size_t slot);
    // The copy of `lease` (a worker's frame) into swapchain image `target` by m_frame_copy,
    // with copy slot `slot`'s set, and the layouts around it.
    void record_compute_copy(VkCommandBuffer cmd, std::size_t slot, const Lease& lease,
                             std::uint32_t target) const;
    // The same copy by vkCmdCopyImage, where the swapchain cannot be written so.
    void record_command_copy(VkCommandBuffer cmd, const Lease& lease, std::uint32_t target) const;
    void release() noexcept;        // unregisters the tasks, destroys the layer's objects
    void record_summary() noexcept; // the first task's figures, for the report

    DeviceGeneration& m_device;
    // Where frames go out: the copies into the swapchain, its images and presents, and every
    // object below but m_ready, m_program_views and m_program_owned, which are the program's.
    DisplayQueue& m_display;
    const DeviceDispatch& m_vk; // the display's device's functions
    VkSwapchainKHR m_swapchain = VK_NULL_HANDLE;
    int m_multiplier = 2;
    bool m_pace = false;
    std::chrono::steady_clock::duration m_frame_interval{}; // smoothed, the program's frames
    std::chrono::steady_clock::time_point m_last_program_frame;
    std::chrono::steady_clock::time_point m_last_present; // the presenter's last present
    VkFormat m_format = VK_FORMAT_UNDEFINED;
    // The program's images may be read through an RGBA8 view (SwapchainRecord::rgba8_readable):
    // the runtime may copy each presented one with a compute dispatch
    // (TaskInputDesc::application_usage).
    bool m_program_sampled = false;
    // Its images may be written through an RGBA8 storage view (SwapchainRecord::rgba8_writable):
    // the worker's frames are copied into them by a compute dispatch. Null: the copy command.
    std::unique_ptr<FrameCopy> m_frame_copy;
    VkExtent2D m_extent{};
    GenerationCounts& m_counts;
    std::vector<VkImage> m_images; // the swapchain's (the real one's, when scaled)
    // The images the program presents: the swapchain's, or the layer's smaller ones when scaled.
    std::vector<VkImage> m_program_images;
    // With m_program_sampled, an RGBA8 sampled view of each (InputImage::view), so that the
    // runtime's compute copy makes none at each present.
    std::vector<VkImageView> m_program_views;
    std::shared_ptr<ScaledSwapchain> m_scaled; // null: not scaled
    TaskId m_upscale;                          // scaled: the worker's upscale of each frame
    // (On the worker's display, the real frame's task, at the program's size; scaled there too,
    // m_real_upscale upscales its output to the window's, as m_frame_upscales do the frames.)
    TaskId m_real_upscale;
    std::vector<TaskId> m_tasks;
    std::vector<TaskId> m_frame_upscales; // scaled: per frame task, the upscale of its frames
    std::vector<std::uint64_t> m_jobs;    // jobs accepted per task (the first makes no frame)
    // Per task: the TaskStats::reconfigurations at which it has this swapchain's size (0: it has
    // it). Until then a submit would go to its old shape, which copies the image at the old
    // size, so none is made.
    std::vector<std::uint64_t> m_reshaped_at;
    std::uint64_t m_frames = 0; // the program's presents on this swapchain
    // Verify mode: the frame the task's last accepted job was given (UINT64_MAX: none).
    std::uint64_t m_last_input = UINT64_MAX;
    // Submits failed with the worker lost, or its display's queue did: frames pass through.
    std::atomic<bool> m_worker_lost{false};
    bool m_prepared = false;              // every task was prepared when last looked at
    VkSemaphore m_ready = VK_NULL_HANDLE; // timeline: the program's waits of each present done
    std::uint64_t m_ready_value = 0;
    VkSemaphore m_done = VK_NULL_HANDLE; // timeline: the layer's copies done
    std::uint64_t m_done_value = 0;
    std::vector<VkSemaphore> m_real_ready;      // binary, per image: a real frame presentable
    std::vector<VkSemaphore> m_generated_ready; // binary, per image: a generated frame presentable
    VkCommandPool m_pool = VK_NULL_HANDLE;
    std::vector<CopySlot> m_slots;
    std::size_t m_next_slot = 0;
    VkQueryPool m_copy_times = VK_NULL_HANDLE; // null: the copies are not timed
    double m_timestamp_ns = 0;                 // ns per timestamp tick
    std::uint64_t m_timestamp_mask = 0;        // the queue's valid timestamp bits
    Checks m_checks;
    std::vector<VkSemaphore> m_owned;         // every semaphore above, destroyed with this
    std::vector<VkSemaphore> m_program_owned; // m_ready, on the program's device
    std::atomic<std::uint64_t>& m_real_presented;

    // The presenter's queue: frames the program presented, oldest first. `m_queued` and
    // `m_finished` count what went in and what the presenter finished (flush waits for them to
    // meet). Guarded by m_items_mutex.
    std::mutex m_items_mutex;
    std::condition_variable m_items_changed;
    std::deque<Held> m_items;
    std::uint64_t m_queued = 0;
    std::uint64_t m_finished = 0;
    bool m_stop = false;
    std::atomic<bool> m_dropping{false}; // stop_for_exit: nothing more is presented
    std::atomic<VkResult> m_last_result{VK_SUCCESS};
    // Held for each of the presenter's acquire and present calls on the swapchain and for each
    // slice of the program's acquire: the swapchain is externally synchronised.
    std::mutex m_swapchain_mutex;
    std::thread m_presenter;
};

} // namespace tandem::layer
