#include "ceiling.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"

namespace tandem::bench {

const char* to_string(Direction d) noexcept {
    return d == Direction::DeviceToHost ? "d2h" : "h2d";
}

namespace {

// The device side of a measurement: a device-local buffer, or an RGBA8 image when `image`.
struct DeviceSide {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkImage image = VK_NULL_HANDLE;
    VkExtent2D extent{};
};

void record_copy(VkCommandBuffer cmd, const DeviceSide& side, VkBuffer host, VkDeviceSize bytes,
                 bool to_host) {
    if (side.image == VK_NULL_HANDLE) {
        const VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(cmd, to_host ? side.buffer : host, to_host ? host : side.buffer, 1,
                        &region);
        return;
    }
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {side.extent.width, side.extent.height, 1};
    if (to_host) {
        vkCmdCopyImageToBuffer(cmd, side.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, host, 1,
                               &region);
    } else {
        vkCmdCopyBufferToImage(cmd, host, side.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                               &region);
    }
}

// `count` copies one after the other, the i-th between sides[i % n] and hosts[i % n].
void record_copies(VkCommandBuffer cmd, std::span<const DeviceSide> sides,
                   std::span<const VkBuffer> hosts, VkDeviceSize bytes, std::uint32_t count,
                   bool to_host) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    detail::vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer ceiling");
    for (std::uint32_t i = 0; i < count; ++i) {
        const DeviceSide& side = sides[i % sides.size()];
        const VkBuffer host = hosts[i % hosts.size()];
        // Each copy follows the last, as a sequence of real transfers would.
        if (to_host || side.image == VK_NULL_HANDLE) {
            const VkBuffer dst = to_host ? host : side.buffer;
            detail::buffer_barrier(cmd, dst, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT);
        } else {
            detail::image_barrier(cmd, side.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        }
        record_copy(cmd, side, host, bytes, to_host);
    }
    if (to_host) {
        for (std::size_t i = 0; i < std::min<std::size_t>(count, hosts.size()); ++i) {
            detail::buffer_barrier(cmd, hosts[i], 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                                   VK_ACCESS_2_HOST_READ_BIT);
        }
    }
    detail::vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer ceiling");
}

CopyCeiling measure(const detail::Device& device, Direction direction, VkDeviceSize bytes,
                    std::optional<VkExtent2D> image_extent, std::uint32_t batch, std::uint32_t runs,
                    std::chrono::microseconds lead, std::uint32_t ring);

// Submits `cmd` to `queue` waiting for `go` to reach `value` (the host's release) and signalling
// `done` at `value` (its completion, which the host times).
void submit_released(const detail::Queue& queue, VkCommandBuffer cmd,
                     const detail::TimelineSemaphore& go, const detail::TimelineSemaphore& done,
                     std::uint64_t value, const char* what) {
    const VkSemaphoreSubmitInfo wait = go.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    const VkSemaphoreSubmitInfo signal =
        done.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    detail::vk_check(queue.submit_one(cmd, {&wait, 1}, {&signal, 1}), what);
}

} // namespace

ReleasedCopyTimes time_released_copies(const detail::Device& device, const detail::Queue& queue,
                                       VkCommandBuffer single, VkCommandBuffer many,
                                       VkDeviceSize bytes, std::uint32_t batch, std::uint32_t runs,
                                       std::chrono::microseconds lead, const std::string& what) {
    detail::TimelineSemaphore go(device, device.label() + " " + what + " go");
    detail::TimelineSemaphore done(device, device.label() + " " + what + " done");
    std::uint64_t value = 0;
    auto timed = [&](VkCommandBuffer cmd, bool wait_lead) -> double {
        ++value;
        submit_released(queue, cmd, go, done, value, ("vkQueueSubmit2 " + what).c_str());
        if (wait_lead) {
            std::this_thread::sleep_for(lead);
        }
        const auto t0 = Clock::now();
        detail::vk_check(go.signal(value), "vkSignalSemaphore " + what);
        if (!spin_until(done, value)) {
            throw Error(VK_TIMEOUT, "Waiting for the " + what + " copies on " + device.label(),
                        "The device may be hung; check the driver");
        }
        return micros(Clock::now() - t0);
    };
    (void)timed(many, false); // warm-up
    (void)timed(single, false);
    std::vector<double> gbps;
    std::vector<double> steady;
    std::vector<double> latency;
    for (std::uint32_t r = 0; r < runs; ++r) {
        const double us = timed(many, true);
        const double one_us = timed(single, true);
        gbps.push_back(static_cast<double>(bytes) * batch / (us * 1e3));
        if (batch > 1 && us > one_us) {
            steady.push_back(static_cast<double>(bytes) * (batch - 1) / ((us - one_us) * 1e3));
        }
        latency.push_back(one_us);
    }
    return {stats_of(std::move(gbps)), stats_of(std::move(steady)), stats_of(std::move(latency))};
}

std::uint32_t uncached_ring(VkDeviceSize bytes, std::uint32_t batch) {
    const VkDeviceSize pairs =
        (k_uncached_ring_bytes + bytes - 1) / std::max<VkDeviceSize>(bytes, 1);
    return static_cast<std::uint32_t>(
        std::clamp<VkDeviceSize>(pairs, 1, std::max<std::uint32_t>(batch, 1)));
}

CopyCeiling measure_copy_ceiling(const detail::Device& device, Direction direction,
                                 VkDeviceSize bytes, std::uint32_t batch, std::uint32_t runs,
                                 std::chrono::microseconds lead, std::uint32_t ring) {
    return measure(device, direction, bytes, std::nullopt, batch, runs, lead, ring);
}

CopyCeiling measure_image_copy(const detail::Device& device, Direction direction, VkExtent2D extent,
                               std::uint32_t batch, std::uint32_t runs,
                               std::chrono::microseconds lead) {
    const VkDeviceSize bytes = VkDeviceSize{extent.width} * extent.height * 4;
    return measure(device, direction, bytes, extent, batch, runs, lead,
                   uncached_ring(bytes, batch));
}

namespace {

// The two sides of a copy of `bytes`: a device-local buffer and a host-visible one, cached for
// reading back, coherent for uploads (on discrete GPUs these are system-memory types, the first
// host-visible types, where the paths' staging lives too).
std::pair<detail::BufferDesc, detail::BufferDesc> copy_buffers(VkDeviceSize bytes, bool to_host,
                                                               const std::string& name) {
    detail::BufferDesc local;
    local.size = bytes;
    local.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    local.required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    local.name = name + " device-local";
    detail::BufferDesc host = local;
    host.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    host.preferred =
        to_host ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    host.name = name + " host-visible";
    return {local, host};
}

CopyCeiling measure(const detail::Device& device, Direction direction, VkDeviceSize bytes,
                    std::optional<VkExtent2D> image_extent, std::uint32_t batch, std::uint32_t runs,
                    std::chrono::microseconds lead, std::uint32_t ring) {
    const bool to_host = direction == Direction::DeviceToHost;
    const std::string name =
        device.label() + (image_extent ? " image copy " : " ceiling ") + to_string(direction);
    const auto [local, host] = copy_buffers(bytes, to_host, name);
    ring = ring == 0 ? uncached_ring(bytes, batch) : ring;
    std::vector<detail::Buffer> device_buffers;
    std::vector<detail::Buffer> host_buffers;
    std::vector<detail::Image> device_images;
    std::vector<DeviceSide> sides;
    std::vector<VkBuffer> hosts;
    for (std::uint32_t i = 0; i < ring; ++i) {
        device_buffers.push_back(detail::create_buffer(device, local));
        host_buffers.push_back(detail::create_buffer(device, host));
        hosts.push_back(host_buffers.back().get());
        DeviceSide side;
        side.buffer = device_buffers.back().get();
        if (image_extent) {
            detail::ImageDesc idesc;
            idesc.width = image_extent->width;
            idesc.height = image_extent->height;
            idesc.format = VK_FORMAT_R8G8B8A8_UNORM;
            // SAMPLED too: create_image makes a view, which needs a view-capable usage.
            idesc.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                          VK_IMAGE_USAGE_SAMPLED_BIT;
            idesc.name = name + " image";
            device_images.push_back(detail::create_image(device, idesc));
            side.image = device_images.back().get();
            side.extent = *image_extent;
            // TRANSFER_DST for the uploads (and the fill below), TRANSFER_SRC after the fill
            // for the downloads: each measurement keeps the layout its copies use.
            detail::submit_and_wait(device, detail::QueueRole::Transfer, [&](VkCommandBuffer cmd) {
                detail::image_barrier(cmd, side.image, VK_IMAGE_LAYOUT_UNDEFINED,
                                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                      VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            });
        }
        sides.push_back(side);
    }

    // Varying source data, the same in every buffer of the ring.
    const auto data = pattern(bytes, bytes + (to_host ? 1 : 2));
    if (to_host) {
        detail::Buffer upload = detail::create_buffer(device, host);
        std::memcpy(upload.mapped, data.data(), bytes);
        detail::flush_buffer(device, upload);
        detail::submit_and_wait(device, detail::QueueRole::Transfer, [&](VkCommandBuffer cmd) {
            for (const DeviceSide& side : sides) {
                if (side.image == VK_NULL_HANDLE) {
                    const VkBufferCopy region{0, 0, bytes};
                    vkCmdCopyBuffer(cmd, upload.get(), side.buffer, 1, &region);
                    continue;
                }
                record_copy(cmd, side, upload.get(), bytes, false);
                detail::image_barrier(cmd, side.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
            }
        });
    } else {
        for (detail::Buffer& b : host_buffers) {
            std::memcpy(b.mapped, data.data(), bytes);
            detail::flush_buffer(device, b);
        }
    }

    const detail::Queue& queue = device.queue(detail::QueueRole::Transfer);
    detail::CommandPool pool(device, queue.family(), name + " pool");
    VkCommandBuffer single = pool.allocate(name + " single");
    VkCommandBuffer many = pool.allocate(name + " batch");
    record_copies(single, {sides.data(), 1}, {hosts.data(), 1}, bytes, 1, to_host);
    record_copies(many, sides, hosts, bytes, batch, to_host);

    const ReleasedCopyTimes times =
        time_released_copies(device, queue, single, many, bytes, batch, runs, lead, "ceiling");
    CopyCeiling out;
    out.host_memory_flags = host_buffers.front().memory_flags;
    out.gbps = times.gbps;
    out.steady_gbps = times.steady_gbps;
    out.latency_us = times.latency_us;
    const DeviceSide& side = sides.front(); // each buffer of the ring was copied alike
    detail::Buffer& host_buffer = host_buffers.front();
    if (to_host) {
        detail::invalidate_buffer(device, host_buffer);
        out.verified = std::memcmp(host_buffer.mapped, data.data(), bytes) == 0;
    } else {
        detail::Buffer check = detail::create_buffer(device, host);
        detail::submit_and_wait(device, detail::QueueRole::Transfer, [&](VkCommandBuffer cmd) {
            if (side.image == VK_NULL_HANDLE) {
                const VkBufferCopy region{0, 0, bytes};
                vkCmdCopyBuffer(cmd, side.buffer, check.get(), 1, &region);
            } else {
                detail::image_barrier(cmd, side.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
                record_copy(cmd, side, check.get(), bytes, true);
            }
            detail::buffer_barrier(cmd, check.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                                   VK_ACCESS_2_HOST_READ_BIT);
        });
        detail::invalidate_buffer(device, check);
        out.verified = std::memcmp(check.mapped, data.data(), bytes) == 0;
    }
    return out;
}

} // namespace

} // namespace tandem::bench

namespace tandem::bench {

BandSplitCost measure_band_split(const detail::Device& device, VkDeviceSize bytes,
                                 std::uint32_t bands, bool download, std::uint32_t runs,
                                 std::chrono::microseconds lead) {
    const auto [local, host] = copy_buffers(bytes, download, device.label() + " band split");
    const detail::Buffer device_buffer = detail::create_buffer(device, local);
    const detail::Buffer host_buffer = detail::create_buffer(device, host);
    const VkBuffer src = download ? device_buffer.get() : host_buffer.get();
    const VkBuffer dst = download ? host_buffer.get() : device_buffer.get();
    const detail::Queue& queue = device.queue(detail::QueueRole::Transfer);
    // vkCmdSetEvent2 needs a graphics or compute queue family; a copy engine's transfer-only
    // family has no events, so that variant is left out there.
    const auto& family = device.info().queue_families.at(queue.family());
    const bool events_allowed = family.graphics || family.compute;
    detail::CommandPool pool(device, queue.family(), "band split pool");
    std::vector<VkCommandBuffer> pieces;
    for (std::uint32_t b = 0; b < bands; ++b) {
        pieces.push_back(pool.allocate("band split piece"));
    }
    VkCommandBuffer with_events =
        events_allowed ? pool.allocate("band split events") : VK_NULL_HANDLE;
    VkCommandBuffer with_barriers = pool.allocate("band split barriers");
    std::vector<VkEvent> events(events_allowed ? bands : 0, VK_NULL_HANDLE);
    for (auto& e : events) {
        VkEventCreateInfo info{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
        detail::vk_check(vkCreateEvent(device.handle(), &info, nullptr, &e), "vkCreateEvent");
    }
    const VkDeviceSize piece = (bytes / bands) & ~VkDeviceSize{255};
    auto region = [&](std::uint32_t b) {
        const VkDeviceSize offset = piece * b;
        return VkBufferCopy{offset, offset, b + 1 == bands ? bytes - offset : piece};
    };
    // After piece b: a barrier (b == bands) or event b, making the piece's writes available to
    // the host (download) or to later copies (upload).
    auto after_piece = [&](VkCommandBuffer cmd, std::uint32_t b) {
        VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        barrier.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        barrier.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        barrier.dstStageMask =
            download ? VK_PIPELINE_STAGE_2_HOST_BIT : VK_PIPELINE_STAGE_2_COPY_BIT;
        barrier.dstAccessMask =
            download ? VK_ACCESS_2_HOST_READ_BIT : VK_ACCESS_2_TRANSFER_WRITE_BIT;
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.memoryBarrierCount = 1;
        dep.pMemoryBarriers = &barrier;
        if (b == bands) {
            vkCmdPipelineBarrier2(cmd, &dep);
        } else {
            vkCmdSetEvent2(cmd, events[b], &dep);
        }
    };
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    for (std::uint32_t b = 0; b < bands; ++b) {
        detail::vk_check(vkBeginCommandBuffer(pieces[b], &begin), "begin piece");
        const VkBufferCopy r = region(b);
        vkCmdCopyBuffer(pieces[b], src, dst, 1, &r);
        after_piece(pieces[b], bands);
        detail::vk_check(vkEndCommandBuffer(pieces[b]), "end piece");
    }
    for (VkCommandBuffer cmd : {with_events, with_barriers}) {
        if (cmd == VK_NULL_HANDLE) {
            continue; // no events on this family
        }
        detail::vk_check(vkBeginCommandBuffer(cmd, &begin), "begin split");
        for (std::uint32_t b = 0; b < bands; ++b) {
            const VkBufferCopy r = region(b);
            vkCmdCopyBuffer(cmd, src, dst, 1, &r);
            after_piece(cmd, cmd == with_events ? b : bands);
        }
        detail::vk_check(vkEndCommandBuffer(cmd), "end split");
    }
    detail::TimelineSemaphore go(device, "band split go");
    // One completion timeline per queue the pieces go to.
    detail::TimelineSemaphore done[2] = {detail::TimelineSemaphore(device, "band split done"),
                                         detail::TimelineSemaphore(device, "band split done 2")};
    const detail::Queue* queues[2] = {&queue, &device.queue(detail::QueueRole::SecondTransfer)};
    std::uint64_t go_value = 0;
    std::uint64_t done_value[2] = {0, 0};
    std::vector<double> first_piece;
    // variant 0: a submission per piece; 1: events; 2: barriers; 3: a submission per piece,
    // alternating between the two copy engines.
    auto timed = [&](int variant) {
        if (variant == 1) {
            // The previous run completed (its last value was seen): reset from the host.
            for (VkEvent ev : events) {
                detail::vk_check(vkResetEvent(device.handle(), ev), "vkResetEvent band split");
            }
        }
        ++go_value;
        const VkSemaphoreSubmitInfo wait =
            go.submit_info(go_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        const std::uint32_t n = variant == 0 || variant == 3 ? bands : 1;
        const std::uint32_t engines = variant == 3 && queues[1] != queues[0] ? 2 : 1;
        std::vector<VkCommandBufferSubmitInfo> cmds(n);
        std::vector<VkSemaphoreSubmitInfo> signals(n);
        std::vector<VkSubmitInfo2> submits[2];
        for (std::uint32_t b = 0; b < n; ++b) {
            const std::uint32_t q = b % engines;
            cmds[b] = VkCommandBufferSubmitInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
            cmds[b].commandBuffer = variant == 0 || variant == 3 ? pieces[b]
                                    : variant == 1               ? with_events
                                                                 : with_barriers;
            signals[b] = done[q].submit_info(++done_value[q], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
            VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
            submit.commandBufferInfoCount = 1;
            submit.pCommandBufferInfos = &cmds[b];
            submit.signalSemaphoreInfoCount = 1;
            submit.pSignalSemaphoreInfos = &signals[b];
            if (submits[q].empty()) {
                submit.waitSemaphoreInfoCount = 1;
                submit.pWaitSemaphoreInfos = &wait;
            }
            submits[q].push_back(submit);
        }
        for (std::uint32_t q = 0; q < engines; ++q) {
            detail::vk_check(queues[q]->submit(submits[q]), "vkQueueSubmit2 band split");
        }
        std::this_thread::sleep_for(lead);
        const auto t0 = Clock::now();
        detail::vk_check(go.signal(go_value), "vkSignalSemaphore band split");
        if (variant == 0) {
            // When the first piece's value is seen: what its own submission adds in front.
            if (!spin_until(done[0], done_value[0] - n + 1)) {
                throw Error(VK_TIMEOUT, "Waiting for a band split copy", "The device may be hung");
            }
            first_piece.push_back(micros(Clock::now() - t0));
        }
        for (std::uint32_t q = 0; q < engines; ++q) {
            if (!spin_until(done[q], done_value[q])) {
                throw Error(VK_TIMEOUT, "Waiting for a band split copy", "The device may be hung");
            }
        }
        return micros(Clock::now() - t0);
    };
    std::vector<double> s, e, b, t;
    for (std::uint32_t r = 0; r <= runs; ++r) {
        const double a = timed(0);
        const double c = events_allowed ? timed(1) : 0.0;
        const double d = timed(2);
        const double f = timed(3);
        if (r > 0) {
            s.push_back(a);
            if (events_allowed) {
                e.push_back(c);
            }
            b.push_back(d);
            t.push_back(f);
        }
    }
    for (VkEvent ev : events) {
        vkDestroyEvent(device.handle(), ev, nullptr);
    }
    first_piece.erase(first_piece.begin()); // the warm-up round's
    return {stats_of(std::move(s)), stats_of(std::move(e)), stats_of(std::move(b)),
            stats_of(std::move(t)), stats_of(std::move(first_piece))};
}

ConcurrentCopies measure_concurrent_copies(const detail::Device& worker,
                                           const detail::Device& primary, VkDeviceSize bytes,
                                           std::uint32_t runs, std::chrono::microseconds lead) {
    // One side: its buffers, one recorded copy, and the semaphores that release and time it.
    struct Side {
        const detail::Device* device;
        bool download;
        detail::Buffer local, host;
        detail::CommandPool pool;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        detail::TimelineSemaphore go, done;
        std::uint64_t value = 0;
    };
    auto make_side = [&](const detail::Device& device, bool download) {
        const std::string name =
            device.label() + (download ? " concurrent d2h" : " concurrent h2d");
        const auto [local, host] = copy_buffers(bytes, download, name);
        const detail::Queue& queue = device.queue(detail::QueueRole::Transfer);
        auto side = std::make_unique<Side>(Side{
            &device, download, detail::create_buffer(device, local),
            detail::create_buffer(device, host), detail::CommandPool(device, queue.family(), name),
            VK_NULL_HANDLE, detail::TimelineSemaphore(device, name + " go"),
            detail::TimelineSemaphore(device, name + " done"), 0});
        side->cmd = side->pool.allocate(name);
        const DeviceSide device_side{side->local.get(), VK_NULL_HANDLE, {}};
        const VkBuffer host_buffer = side->host.get();
        record_copies(side->cmd, {&device_side, 1}, {&host_buffer, 1}, bytes, 1, download);
        return side;
    };
    const auto d2h = make_side(worker, true);
    const auto h2d = make_side(primary, false);

    // Submits the sides' copies, waiting for their go values; releases them one right after the
    // other and returns each one's time from its release to its observed completion.
    auto timed = [&](std::initializer_list<Side*> sides) {
        for (Side* side : sides) {
            ++side->value;
            submit_released(side->device->queue(detail::QueueRole::Transfer), side->cmd, side->go,
                            side->done, side->value, "vkQueueSubmit2 concurrent copy");
        }
        std::this_thread::sleep_for(lead);
        std::vector<Clock::time_point> released;
        for (Side* side : sides) {
            released.push_back(Clock::now());
            detail::vk_check(side->go.signal(side->value), "vkSignalSemaphore concurrent copy");
        }
        std::vector<double> us(sides.size(), -1.0);
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        for (std::size_t left = sides.size(); left > 0;) {
            std::size_t i = 0;
            for (Side* side : sides) {
                std::uint64_t reached = 0;
                if (us[i] < 0 && side->done.value(reached) == VK_SUCCESS &&
                    reached >= side->value) {
                    us[i] = micros(Clock::now() - released[i]);
                    --left;
                }
                ++i;
            }
            if (Clock::now() > deadline) {
                throw Error(VK_TIMEOUT, "Waiting for a concurrent copy", "The device may be hung");
            }
        }
        return us;
    };
    std::vector<double> d2h_alone, h2d_alone, d2h_together, h2d_together;
    for (std::uint32_t r = 0; r <= runs; ++r) {
        const double a = timed({d2h.get()})[0];
        const double b = timed({h2d.get()})[0];
        const auto both = timed({d2h.get(), h2d.get()});
        if (r > 0) { // the first round warms up
            d2h_alone.push_back(a);
            h2d_alone.push_back(b);
            d2h_together.push_back(both[0]);
            h2d_together.push_back(both[1]);
        }
    }
    return {stats_of(std::move(d2h_alone)), stats_of(std::move(h2d_alone)),
            stats_of(std::move(d2h_together)), stats_of(std::move(h2d_together))};
}

std::optional<PcieLink> pcie_link(const detail::Device& device) {
    if (device.info().type == "cpu") {
        return std::nullopt;
    }
    std::uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(device.physical(), nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vkEnumerateDeviceExtensionProperties(device.physical(), nullptr, &count, extensions.data());
    const bool has_bus_info =
        std::any_of(extensions.begin(), extensions.end(), [](const VkExtensionProperties& e) {
            return std::strcmp(e.extensionName, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME) == 0;
        });
    if (!has_bus_info) {
        return std::nullopt;
    }
    VkPhysicalDevicePCIBusInfoPropertiesEXT bus{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &bus};
    vkGetPhysicalDeviceProperties2(device.physical(), &props);
    char address[32];
    std::snprintf(address, sizeof address, "%04x:%02x:%02x.%x", bus.pciDomain, bus.pciBus,
                  bus.pciDevice, bus.pciFunction);
    const std::string dir = std::string("/sys/bus/pci/devices/") + address + "/";
    double gts = 0.0;
    unsigned width = 0;
    std::ifstream speed(dir + "current_link_speed");
    std::ifstream lanes(dir + "current_link_width");
    if (!(speed >> gts) || !(lanes >> width) || gts < 8.0 || width == 0) {
        return std::nullopt; // unreadable, or PCIe 1.x/2.x (8b/10b coding)
    }
    char text[96];
    std::snprintf(text, sizeof text, "%.1f GT/s x%u at %s", gts, width, address);
    return PcieLink{gts * width * (128.0 / 130.0) / 8.0, text};
}

} // namespace tandem::bench
