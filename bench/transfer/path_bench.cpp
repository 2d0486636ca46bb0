#include "path_bench.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/resources.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/transfer_link.hpp"

namespace tandem::bench {

namespace {

// Slot 0's hand-off times (steady clock, ns), for the latency runs, which use slot 0 only.
constexpr std::uint32_t k_stamped_bands = 64;

// What the benchmark plugs into its link: the bands it measures, GPU times, and when each band of
// slot 0 was handed to the primary.
class BenchObserver final : public detail::TransferObserver {
public:
    BenchObserver(std::vector<std::uint32_t> heights, bool gpu_times)
        : m_heights(std::move(heights)), m_gpu_times(gpu_times) {}
    [[nodiscard]] std::vector<std::uint32_t> band_heights() const override { return m_heights; }
    [[nodiscard]] bool times_bands_on_gpus() const override { return m_gpu_times; }
    void on_band_handed(std::uint32_t slot, std::uint32_t band) noexcept override {
        if (slot == 0 && band < k_stamped_bands) {
            handed[band].store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
        }
    }
    std::array<std::atomic<std::int64_t>, k_stamped_bands> handed{};

private:
    std::vector<std::uint32_t> m_heights;
    bool m_gpu_times;
};

} // namespace

PathResult measure_path(const detail::Device& worker, const detail::Device& primary,
                        const PairInfo& pair, const PathPoint& point) {
    PathResult result;
    detail::TransferDesc desc;
    desc.width = point.width;
    desc.height = point.height;
    desc.format = point.format;
    desc.slots = point.slots;
    desc.band_rows = point.band_rows_requested;
    desc.hand_off = point.hand_off;
    desc.stream_copies = point.stream_copies;
    desc.forced = point.path;
    desc.bridge_spin = point.bridge_spin;
    desc.write_in_place = point.write_in_place;
    desc.read_in_place = point.read_in_place;
    desc.worker_usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    const auto observer = std::make_shared<BenchObserver>(point.band_heights, point.gpu_times);
    desc.observer = observer;
    auto& handed = observer->handed;
    detail::TransferLink link(worker, primary, pair, desc);
    for (std::uint32_t b = 0; b < link.layout().band_count; ++b) {
        result.band_heights.push_back(link.layout().band(b).rows);
    }
    result.gpu_side_sync = link.gpu_side_sync();
    result.written_in_place = link.writes_in_place();
    result.read_in_place = link.reads_in_place();

    const VkExtent2D extent{point.width, point.height};
    const std::size_t bytes = link.layout().image_bytes();
    // Zero copy: each source and its target are one allocation, so a poisoned target is a
    // poisoned source, and the source is written again after every poisoning (on the worker:
    // what the check then reads on the primary crossed the release and acquire).
    const bool zero_copy = link.path() == TransferPath::ZeroCopy;
    std::vector<detail::Image> sources;
    std::vector<detail::Image> targets;
    // Read in place, the targets are the staging and stay in GENERAL.
    const VkImageLayout target_layout = link.primary_layout_after();
    // Written in place, the sources are the staging and go to the link in GENERAL.
    const VkImageLayout source_layout =
        link.writes_in_place() ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    std::vector<VkImageLayout> source_layouts(point.slots, source_layout);
    std::vector<std::vector<std::uint8_t>> data;
    for (std::uint32_t s = 0; s < point.slots; ++s) {
        detail::LinkImages images =
            link.create_images(s, "bench image " + std::to_string(s),
                               VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                               VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
        sources.push_back(std::move(images.worker));
        targets.push_back(std::move(images.primary));
        data.push_back(pattern(bytes, 1000 + s * 7 + point.width));
        poison_image(primary, targets[s].get(), VK_IMAGE_LAYOUT_UNDEFINED, target_layout);
        upload_image(worker, sources[s].get(), extent, point.format, data[s], source_layout);
    }
    detail::TimelineSemaphore go(worker, "bench worker done");
    std::uint64_t go_value = 0;
    std::vector<detail::TransferTicket> tickets(point.slots);

    auto submit = [&](std::uint32_t s, VkSemaphoreSubmitInfo wait) {
        const VkResult r = link.submit(s, sources[s].get(), source_layouts[s], wait,
                                       targets[s].get(), target_layout, tickets[s]);
        if (r != VK_SUCCESS) {
            throw Error(r, "Submitting a benchmark transfer", link.error());
        }
        source_layouts[s] = link.worker_layout_after(source_layouts[s]);
    };
    auto wait_primary = [&](std::uint64_t value) {
        if (!spin_until(link.primary_timeline(), value)) {
            throw Error(VK_TIMEOUT, "Waiting for a benchmark transfer",
                        link.failed() ? link.error() : "The devices may be hung");
        }
    };
    // Throughput: `batch` transfers, each slot reused as soon as its last transfer completed.
    // The host spins on the primary timeline, so the first transfer's completion is seen when it
    // happens (the loop waits for it before reusing its slot).
    struct Timing {
        double whole_us = 0;  // first submit to last completion
        double steady_us = 0; // first completion to last completion
    };
    auto pipelined = [&]() -> Timing {
        const auto t0 = Clock::now();
        Clock::time_point first_done{};
        for (std::uint32_t i = 0; i < point.batch; ++i) {
            const std::uint32_t s = i % point.slots;
            if (i >= point.slots) {
                wait_primary(tickets[s].primary_value);
                if (i == point.slots) {
                    first_done = Clock::now();
                }
            }
            submit(s, {});
        }
        wait_primary(tickets[(point.batch - 1) % point.slots].primary_value);
        const auto end = Clock::now();
        return {micros(end - t0), micros(end - first_done)};
    };
    // Latency: submitted ahead, released by the "worker done" signal after `lead`.
    const std::uint32_t stamped = std::min(result.bands(), k_stamped_bands);
    std::vector<std::vector<double>> handed_us(stamped);
    std::vector<std::vector<double>> seen_us(point.watch_worker ? stamped : 0);
    // With GPU times: per band, its worker begin, worker end, primary begin, primary end.
    std::vector<std::array<std::vector<double>, 4>> gpu_us(link.gpu_times() ? result.bands() : 0);
    auto single = [&]() -> double {
        ++go_value;
        for (auto& h : handed) {
            h.store(0, std::memory_order_relaxed);
        }
        submit(0, go.submit_info(go_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
        std::this_thread::sleep_for(point.lead);
        const auto t0 = Clock::now();
        if (go.signal(go_value) != VK_SUCCESS) {
            throw Error("Signalling the benchmark's worker semaphore failed");
        }
        if (point.watch_worker) {
            // This thread sees each worker band done too, before it waits for the primary.
            const std::uint64_t first = tickets[0].worker_value - (result.bands() - 1);
            for (std::uint32_t b = 0; b < stamped; ++b) {
                if (!spin_until(link.worker_timeline(), first + b)) {
                    throw Error(VK_TIMEOUT, "Waiting for a benchmark transfer's worker band",
                                link.failed() ? link.error() : "The worker may be hung");
                }
                seen_us[b].push_back(micros(Clock::now() - t0));
            }
        }
        wait_primary(tickets[0].primary_value);
        const double us = micros(Clock::now() - t0);
        if (link.gpu_times()) {
            const auto times = link.read_gpu_times(0);
            if (!times) {
                throw Error("Reading a benchmark transfer's GPU times failed");
            }
            for (std::size_t b = 0; b < gpu_us.size(); ++b) {
                const detail::BandGpuTimes& t = (*times)[b];
                gpu_us[b][0].push_back(micros(t.worker_begin - t0));
                gpu_us[b][1].push_back(micros(t.worker_end - t0));
                gpu_us[b][2].push_back(micros(t.primary_begin - t0));
                gpu_us[b][3].push_back(micros(t.primary_end - t0));
            }
        }
        for (std::uint32_t b = 0; b < stamped; ++b) {
            const std::int64_t at = handed[b].load(std::memory_order_relaxed);
            if (at != 0) {
                handed_us[b].push_back(micros(Clock::time_point(Clock::duration(at)) - t0));
            }
        }
        return us;
    };
    auto verify = [&]() {
        bool ok = true;
        for (std::uint32_t s = 0; s < point.slots; ++s) {
            ok = ok && read_image(primary, targets[s].get(), extent, point.format, target_layout) ==
                           data[s];
        }
        return ok;
    };
    auto poison = [&]() {
        for (auto& t : targets) {
            poison_image(primary, t.get(), target_layout, target_layout);
        }
        for (std::uint32_t s = 0; zero_copy && s < point.slots; ++s) {
            upload_image(worker, sources[s].get(), extent, point.format, data[s],
                         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
            source_layouts[s] = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        }
    };

    // Every transfer with bytes of its own, untimed: 3 x slots transfers streaming as the timed
    // batch does, each slot's source rewritten with its transfer's own bytes before the submit,
    // its target read back and poisoned once that transfer completed (the other slots in flight
    // meanwhile). A stale, skipped or reordered transfer leaves another's bytes or the poison.
    auto verify_each = [&]() {
        const std::uint32_t count = 3 * point.slots;
        std::vector<std::vector<std::uint8_t>> own(point.slots);
        bool ok = true;
        for (std::uint32_t i = 0; i < count + point.slots && ok; ++i) {
            const std::uint32_t s = i % point.slots;
            if (i >= point.slots) {
                wait_primary(tickets[s].primary_value);
                ok = read_image(primary, targets[s].get(), extent, point.format, target_layout) ==
                     own[s];
                poison_image(primary, targets[s].get(), target_layout, target_layout);
            }
            if (i < count) {
                own[s] = pattern(bytes, 5000 + i * 13 + point.width);
                upload_image(worker, sources[s].get(), extent, point.format, own[s], source_layout);
                source_layouts[s] = source_layout;
                submit(s, {});
            }
        }
        for (std::uint32_t s = 0; s < point.slots; ++s) { // the timed runs' bytes again
            upload_image(worker, sources[s].get(), extent, point.format, data[s], source_layout);
            source_layouts[s] = source_layout;
        }
        return ok;
    };

    (void)pipelined(); // warm-up: every slot used once, memory touched
    (void)single();
    for (auto& h : handed_us) {
        h.clear(); // the warm-up's
    }
    for (auto& s : seen_us) {
        s.clear();
    }
    for (auto& band : gpu_us) {
        for (auto& v : band) {
            v.clear();
        }
    }
    result.verified = verify();
    if (result.verified && !verify_each()) {
        result.verified = false;
        result.error = "a transfer of a stream carried another transfer's bytes";
    }
    std::vector<double> gbps;
    std::vector<double> gbps_whole;
    std::vector<double> latency;
    for (std::uint32_t r = 0; r < point.runs && result.verified; ++r) {
        poison();
        const Timing t = pipelined();
        gbps.push_back(static_cast<double>(bytes) * (point.batch - 1) / (t.steady_us * 1e3));
        gbps_whole.push_back(static_cast<double>(bytes) * point.batch / (t.whole_us * 1e3));
        result.verified = verify();
        poison();
        latency.push_back(single());
        result.verified = result.verified && read_image(primary, targets[0].get(), extent,
                                                        point.format, target_layout) == data[0];
    }
    if (!result.verified && result.error.empty()) {
        result.error = "data differed after a transfer";
    }
    result.gbps = stats_of(std::move(gbps));
    result.gbps_whole_batch = stats_of(std::move(gbps_whole));
    result.latency_us = stats_of(std::move(latency));
    for (auto& s : seen_us) {
        result.worker_band_seen_us.push_back(stats_of(std::move(s)).median);
    }
    for (auto& band : gpu_us) {
        result.band_gpu_us.push_back(
            {stats_of(std::move(band[0])).median, stats_of(std::move(band[1])).median,
             stats_of(std::move(band[2])).median, stats_of(std::move(band[3])).median});
    }
    for (auto& h : handed_us) {
        if (h.empty()) {
            break; // GPU-side sync: no hand-offs
        }
        result.band_handed_us.push_back(stats_of(std::move(h)).median);
    }
    return result;
}

} // namespace tandem::bench
