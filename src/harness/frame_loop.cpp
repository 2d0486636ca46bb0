#include "harness/frame_loop.hpp"

#include <memory>
#include <thread>

#include "harness/lease_reader.hpp"
#include "harness/pattern_check.hpp"

namespace tandem::harness {
namespace {

using Clock = std::chrono::steady_clock;

// An unlimited frame loop with nothing to read yet sleeps this long per frame.
constexpr auto k_idle_frame = std::chrono::microseconds(100);

} // namespace

FrameLoopResult run_stream(Runtime& runtime, TaskId task, const StreamOptions& stream_options,
                           const FrameLoopOptions& loop_options) {
    FrameLoopResult out;
    // The reader is sized from the first lease (the task's image size).
    std::uint32_t width = 1;
    std::uint32_t height = 1;
    std::unique_ptr<LeaseReader> reader;
    Stream stream(runtime, task, stream_options, loop_options.snapshot);
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(loop_options.duration_s));
    const auto frame_period = loop_options.fps > 0
                                  ? std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(1.0 / loop_options.fps))
                                  : Clock::duration::zero();
    auto next_frame = start;
    auto next_progress = start + std::chrono::seconds(1);
    std::uint64_t previous = 0;
    stream.start();
    for (;;) {
        const auto now = Clock::now();
        if (now >= end) {
            break;
        }
        if (stream.finished() && runtime.stats(task).in_flight == 0) {
            runtime.pump();
            break;
        }
        runtime.pump();
        std::uint64_t frame_value = 0; // the primary timeline value of this frame's read
        if (auto lease = runtime.acquire(task)) {
            ++out.leases;
            if (!reader) {
                width = lease->extent.width;
                height = lease->extent.height;
                reader = std::make_unique<LeaseReader>(runtime, 3, width, height);
            }
            const bool fresh = lease->generation != previous;
            out.new_outputs += fresh ? 1 : 0;
            const bool verify = loop_options.verify_pattern && loop_options.verify_every > 0 &&
                                fresh && out.new_outputs % loop_options.verify_every == 0;
            const std::uint64_t value = reader->read(*lease, verify);
            if (verify && value != 0 &&
                reader->wait(value, std::chrono::seconds(10)) == VK_SUCCESS) {
                const auto* px = reader->pixels(value);
                const auto bad = pattern_mismatch(px, lease->generation, width, height);
                ++out.verified;
                if (bad >= 0) {
                    ++out.mismatches;
                    if (out.first_mismatch.empty()) {
                        out.first_mismatch = "generation " + std::to_string(lease->generation) +
                                             " differs at texel " + std::to_string(bad);
                    }
                }
            }
            runtime.release(*lease, value);
            previous = lease->generation;
            frame_value = value;
        }
        ++out.frames;
        if (loop_options.progress && now >= next_progress) {
            loop_options.progress(stream.stats());
            next_progress += std::chrono::seconds(1);
        }
        if (frame_period > Clock::duration::zero()) {
            next_frame += frame_period;
            if (next_frame < Clock::now()) {
                next_frame = Clock::now();
            }
            std::this_thread::sleep_until(next_frame);
        } else if (frame_value != 0) {
            // Unlimited: paced by the primary, as a real frame loop is by its GPU work: the next
            // frame starts once this frame's read completed, and the thread yields in between,
            // so a CPU device (lavapipe) keeps the cores it renders on.
            (void)reader->wait(frame_value, std::chrono::seconds(10));
            std::this_thread::yield();
        } else {
            // Nothing to show yet: no GPU work to be paced by, so do not spin.
            std::this_thread::sleep_for(k_idle_frame);
        }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    stream.stop();
    out.stream = stream.stats();
    out.frame_hz = elapsed > 0 ? static_cast<double>(out.frames) / elapsed : 0;
    return out;
}

} // namespace tandem::harness
