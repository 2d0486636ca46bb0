#include "transfer/path_self_test.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "core/log.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/transfer_link.hpp"
#include "transfer/transfer_path.hpp"
#include "transfer/zero_copy_path.hpp"

namespace tandem::detail {
namespace {

// Each wait of the self-test gives up after this long: a path that takes longer to move a few
// kilobytes is not one to use.
constexpr auto k_step_timeout = std::chrono::seconds(5);

struct CorruptionHook {
    std::mutex mutex;
    std::array<int, k_all_transfer_paths.size()> pending{};
};

CorruptionHook& corruption_hook() {
    static CorruptionHook hook;
    return hook;
}

bool take_corruption(TransferPath path) {
    CorruptionHook& hook = corruption_hook();
    std::lock_guard lock(hook.mutex);
    int& n = hook.pending[static_cast<std::size_t>(path)];
    if (n <= 0) {
        return false;
    }
    --n;
    return true;
}

SelfTestResult failure(std::string reason) {
    return {false, std::move(reason)};
}

std::string step_failure(const std::string& step, VkResult result) {
    return step + " failed (" + tandem::to_string(result) + ")";
}

// What a self-test makes. With a RetireList (the runtime's) it is retired there when the test
// ends, so it goes once the GPU passed the test's batches and nobody waits for that; without one
// (a test of the path alone) both devices are settled first. Members go in reverse: the link
// (which drains) before the images and buffers it moved between.
struct SelfTestObjects {
    std::vector<CommandPool> pools;
    std::vector<std::unique_ptr<TimelineSemaphore>> done; // each main-queue step signals one
    std::vector<RetirePoint> points;                      // ... at 1, once submitted
    std::optional<Buffer> upload;
    std::optional<Buffer> readback;
    std::optional<LinkImages> images;
    std::unique_ptr<TransferLink> link;
};

// Hands the objects over (retire list) or settles both devices when the self-test ends, however
// it ends: a failed step may leave the link's work or a submit in flight.
class SelfTestEnd {
public:
    SelfTestEnd(const Device& worker, const Device& primary, RetireList* retire)
        : m_worker(worker), m_primary(primary), m_retire(retire) {}
    ~SelfTestEnd() {
        if (m_retire != nullptr) {
            try {
                std::vector<RetirePoint> points = objects.points;
                if (objects.link) {
                    const auto link = objects.link->quiesce();
                    if (link.empty()) {
                        throw std::bad_alloc();
                    }
                    points.insert(points.end(), link.begin(), link.end());
                }
                std::vector<const Device*> devices{&m_worker};
                if (&m_primary != &m_worker) {
                    devices.push_back(&m_primary);
                }
                m_retire->retire(std::move(objects), std::move(points), std::move(devices));
                return;
            } catch (...) {
                // Out of memory: settled and destroyed here instead.
            }
        }
        (void)m_worker.settle(k_step_timeout);
        if (&m_primary != &m_worker) {
            (void)m_primary.settle(k_step_timeout);
        }
    }
    SelfTestEnd(const SelfTestEnd&) = delete;
    SelfTestEnd& operator=(const SelfTestEnd&) = delete;

    SelfTestObjects objects;

private:
    const Device& m_worker;
    const Device& m_primary;
    RetireList* m_retire;
};

// Records with `record`, submits to `device`'s main queue and waits for that batch (polling
// its own timeline), every result checked under `context`; its objects are named `name` (never
// containing the context, so an injected fault fails a step, not the creation of an object it
// then could not destroy) and kept in `objects`. VK_SUCCESS or the first failing result.
VkResult run_on_main_queue(const Device& device, const std::string& context,
                           const std::string& name, SelfTestObjects& objects,
                           const std::function<void(VkCommandBuffer)>& record) {
    const Queue& queue = device.queue(QueueRole::Main);
    objects.pools.emplace_back(device, queue.family(), name + " pool");
    VkCommandBuffer cmd = objects.pools.back().allocate(name);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VkResult r = vk_status(vkBeginCommandBuffer(cmd, &begin), context + " begin");
    if (r != VK_SUCCESS) {
        return r;
    }
    record(cmd);
    r = vk_status(vkEndCommandBuffer(cmd), context + " end");
    if (r != VK_SUCCESS) {
        return r;
    }
    objects.done.push_back(std::make_unique<TimelineSemaphore>(device, name + " done"));
    const TimelineSemaphore& done = *objects.done.back();
    const VkSemaphoreSubmitInfo signal = done.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    r = vk_status(queue.submit_one(cmd, {}, {&signal, 1}), context + " submit");
    // An injected fault may stand for a submit that happened: retired as if it had.
    objects.points.push_back({&device, done.handle(), 1});
    if (r != VK_SUCCESS) {
        return r;
    }
    return vk_status(done.wait(1, k_step_timeout), context + " wait");
}

// The known image the self-test sends: every byte a function of its texel and place.
std::vector<std::uint8_t> known_image(std::uint32_t w, std::uint32_t h, std::uint32_t texel) {
    std::vector<std::uint8_t> known(std::size_t{w} * h * texel);
    for (std::uint32_t y = 0; y < h; ++y) {
        for (std::uint32_t x = 0; x < w; ++x) {
            for (std::uint32_t b = 0; b < texel; ++b) {
                known[(std::size_t{y} * w + x) * texel + b] = self_test_byte(x, y, b);
            }
        }
    }
    return known;
}

// Waits (polling, up to k_step_timeout each) for the move `ticket` to reach the primary and for
// its worker side: empty once both did, else what went wrong.
std::string wait_for_move(TransferLink& link, const TransferTicket& ticket,
                          const std::string& context) {
    VkResult r = VK_SUCCESS;
    const auto deadline = std::chrono::steady_clock::now() + k_step_timeout;
    for (;;) {
        std::uint64_t reached = 0;
        r = vk_status(link.completed_primary_value(reached), context + ": move wait");
        if (r != VK_SUCCESS) {
            return step_failure("waiting for the move", r);
        }
        if (reached >= ticket.primary_value) {
            break;
        }
        if (link.failed()) {
            return "the move failed: " + link.error();
        }
        if (std::chrono::steady_clock::now() > deadline) {
            return "the move did not reach the primary within " +
                   std::to_string(k_step_timeout.count()) + " s";
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    r = vk_status(link.worker_timeline().wait(ticket.worker_value, k_step_timeout),
                  context + ": worker side wait");
    if (r != VK_SUCCESS) {
        return step_failure("waiting for the worker's side of the move", r);
    }
    return {};
}

SelfTestResult run_self_test(const Device& worker, const Device& primary, const PairInfo& pair,
                             TransferPath path, VkFormat format,
                             const StagingCopierFactory& cuda_copier, RetireList* retire) {
    const std::string context = self_test_context(path);
    const std::string name = std::string("self-test ") + to_string(path); // see run_on_main_queue
    const std::uint32_t w = k_self_test_width;
    const std::uint32_t h = k_self_test_height;
    const std::uint32_t texel = bytes_per_texel(format);
    const std::size_t bytes = std::size_t{w} * h * texel;
    const std::vector<std::uint8_t> known = known_image(w, h, texel);
    std::vector<std::uint8_t> sent = known;
    if (take_corruption(path)) {
        sent[(std::size_t{3} * w + 5) * texel] ^= 0xFF;
    }

    TransferDesc desc;
    desc.width = w;
    desc.height = h;
    desc.format = format;
    desc.slots = 1;
    desc.forced = path;
    desc.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(k_step_timeout);
    desc.bridge_spin = std::chrono::microseconds(0);
    desc.cuda_copier = cuda_copier;
    desc.settle_on_destroy = retire == nullptr;

    SelfTestEnd end(worker, primary, retire);
    SelfTestObjects& objects = end.objects;
    try {
        objects.link = std::make_unique<TransferLink>(worker, primary, pair, desc);
    } catch (const std::exception& e) {
        return failure(std::string("setting up the path failed: ") + e.what());
    }
    TransferLink* link = objects.link.get();
    try {
        objects.images =
            link->create_images(0, worker.label() + " " + name, VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    } catch (const std::exception& e) {
        return failure(std::string("creating its images failed: ") + e.what());
    }
    const LinkImages& images = *objects.images;

    BufferDesc upload_desc;
    upload_desc.size = bytes;
    upload_desc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    upload_desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    upload_desc.name = name + " upload";
    const Buffer& upload = objects.upload.emplace(create_buffer(worker, upload_desc));
    std::memcpy(upload.mapped, sent.data(), bytes);
    flush_buffer(worker, upload);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {w, h, 1};
    const VkImage worker_image = images.worker.get();
    VkResult r = run_on_main_queue(
        worker, context + ": upload", name + " upload", objects, [&](VkCommandBuffer cmd) {
            image_barrier(cmd, worker_image, VK_IMAGE_LAYOUT_UNDEFINED,
                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            vkCmdCopyBufferToImage(cmd, upload.get(), worker_image,
                                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
            image_barrier(cmd, worker_image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
        });
    if (r != VK_SUCCESS) {
        return failure(step_failure("uploading the known image on the worker", r));
    }

    // The move itself: the worker's writes completed on the host's watch, so no semaphore.
    TransferTicket ticket;
    VkSemaphoreSubmitInfo no_wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    r = vk_status(link->submit(0, worker_image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, no_wait,
                               images.primary.get(), VK_IMAGE_LAYOUT_UNDEFINED, ticket),
                  context + ": move submit");
    if (r != VK_SUCCESS) {
        return failure(step_failure("submitting the move", r) +
                       (link->failed() ? ": " + link->error() : std::string()));
    }
    if (std::string why = wait_for_move(*link, ticket, context); !why.empty()) {
        return failure(why);
    }

    BufferDesc readback_desc;
    readback_desc.size = bytes;
    readback_desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    readback_desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    readback_desc.preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    readback_desc.name = name + " readback";
    const Buffer& readback = objects.readback.emplace(create_buffer(primary, readback_desc));
    const VkImage primary_image = images.primary.get();
    r = run_on_main_queue(
        primary, context + ": readback", name + " readback", objects, [&](VkCommandBuffer cmd) {
            image_barrier(cmd, primary_image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                          VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
            vkCmdCopyImageToBuffer(cmd, primary_image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                   readback.get(), 1, &region);
            buffer_barrier(cmd, readback.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                           VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                           VK_ACCESS_2_HOST_READ_BIT);
        });
    if (r != VK_SUCCESS) {
        return failure(step_failure("reading the moved image back on the primary", r));
    }
    invalidate_buffer(primary, readback);
    const auto* got = static_cast<const std::uint8_t*>(readback.mapped);
    for (std::size_t i = 0; i < bytes; ++i) {
        if (got[i] != known[i]) {
            const std::size_t t = i / texel;
            char values[48];
            std::snprintf(values, sizeof values, "0x%02X where the known image has 0x%02X",
                          unsigned{got[i]}, unsigned{known[i]});
            return failure("byte " + std::to_string(i % texel) + " of texel (" +
                           std::to_string(t % w) + ", " + std::to_string(t / w) + ") of a " +
                           std::to_string(w) + "x" + std::to_string(h) + " " + format_name(format) +
                           " image arrived as " + values);
        }
    }
    return {true, {}};
}

} // namespace

std::string self_test_context(TransferPath path) {
    return std::string("path self-test ") + to_string(path);
}

SelfTestResult self_test_path(const Device& worker, const Device& primary, const PairInfo& pair,
                              TransferPath path, VkFormat format,
                              const StagingCopierFactory& cuda_copier,
                              RetireList* retire) noexcept {
    try {
        return run_self_test(worker, primary, pair, path, format, cuda_copier, retire);
    } catch (const std::exception& e) {
        return failure(std::string("the self-test could not run: ") + e.what());
    } catch (...) {
        return failure("the self-test could not run");
    }
}

TransferPath choose_tested_path(const Device& worker, const Device& primary, const PairInfo& pair,
                                std::optional<TransferPath> forced, VkFormat format,
                                PathHealth& health, const StagingCopierFactory& cuda_copier,
                                RetireList* retire) {
    // Each round returns or drops one path, so it ends within k_all_transfer_paths rounds.
    for (;;) {
        PairInfo allowed = health.restrict(pair);
        if (!forced && allowed.allows(TransferPath::ZeroCopy) &&
            !ZeroCopyPath::exports(worker, format, k_zero_copy_usage)) {
            // As TransferLink: the matrix knows RGBA8; this format is passed over, not dropped.
            for (PathAvailability& a : allowed.paths) {
                a.available = a.available && a.path != TransferPath::ZeroCopy;
            }
        }
        const auto dropped = health.dropped(pair.worker, pair.primary);
        if (!forced && !allowed.best_path() && !dropped.empty()) {
            std::string why;
            for (const auto& d : dropped) {
                why += std::string(why.empty() ? "" : "; ") + to_string(d.path) + ": " + d.reason;
            }
            // Unsupported: the pair has no transfer path that works, whatever the task asks.
            throw Error(ErrorCategory::Unsupported,
                        "Every transfer path from adapter " + std::to_string(pair.worker) +
                            " to adapter " + std::to_string(pair.primary) + " was dropped (" + why +
                            ")",
                        "Place the task on the primary, or on another worker");
        }
        const TransferPath path = negotiate_path(allowed, forced);
        if (health.passed(pair.worker, pair.primary, path)) {
            return path;
        }
        SelfTestResult result =
            self_test_path(worker, primary, pair, path, format, cuda_copier, retire);
        if (result.ok) {
            log_debug("transfer", "{}->{}: the {} path passed its self-test", worker.label(),
                      primary.label(), to_string(path));
            health.mark_passed(pair.worker, pair.primary, path);
            return path;
        }
        log_warn("transfer", "{}->{}: the {} path failed its self-test and is dropped: {}",
                 worker.label(), primary.label(), to_string(path), result.reason);
        (void)health.drop(pair.worker, pair.primary, path,
                          "its self-test failed: " + result.reason);
    }
}

void inject_self_test_corruption(TransferPath path, int count) {
    CorruptionHook& hook = corruption_hook();
    std::lock_guard lock(hook.mutex);
    hook.pending[static_cast<std::size_t>(path)] = count;
}

void clear_self_test_corruption() noexcept {
    CorruptionHook& hook = corruption_hook();
    std::lock_guard lock(hook.mutex);
    hook.pending.fill(0);
}

} // namespace tandem::detail
