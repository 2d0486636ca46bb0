// run_stream(): a stream plus a simulated primary frame loop, as `tandem stream` and the
// runtime benchmark run them, on the public API alone. The stream's timer thread submits at the
// target rate; the calling thread is the application's frame loop at a chosen FPS (or unlimited):
// each frame it pumps, acquires the newest output, reads it on the primary (one texel; the whole
// image, checked against the pattern's CPU reference, for every Nth new generation) and releases
// the lease with the primary timeline value of that read. At unlimited FPS the loop is paced by the
// primary: a frame starts once the previous frame's read completed (the thread yields between
// frames, and sleeps briefly while there is nothing to read), as a real frame loop is paced by
// its GPU work, instead of spinning on the CPU a CPU worker device needs.
//
// Threads: runs on the calling thread (plus the stream's timer thread); returns when the
// duration is over or the stream's limit was reached and nothing is in flight.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/stream.hpp"
#include "tandem/runtime.hpp"

namespace tandem::harness {

struct FrameLoopOptions {
    double fps = 60.0;               // 0: unlimited
    double duration_s = 5.0;         // upper bound on the run
    std::uint32_t verify_every = 30; // verify every Nth new generation read (0: never)
    bool verify_pattern = true;      // the task runs the pattern workload
    std::vector<std::byte> snapshot; // the bytes every submit carries
    std::function<void(const StreamStats&)> progress; // about once a second, when set
};

struct FrameLoopResult {
    StreamStats stream;
    std::uint64_t frames = 0;
    double frame_hz = 0;
    std::uint64_t leases = 0;
    std::uint64_t new_outputs = 0; // frames whose lease was newer than the previous frame's
    std::uint64_t verified = 0;
    std::uint64_t mismatches = 0;
    std::string first_mismatch;
};

[[nodiscard]] FrameLoopResult run_stream(Runtime& runtime, TaskId task,
                                         const StreamOptions& stream_options,
                                         const FrameLoopOptions& loop_options);

} // namespace tandem::harness
