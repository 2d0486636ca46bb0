// The queue and synchronisation probe behind `tandem probe`: jobs from a worker adapter to the
// primary at a target rate, every stage of each timed: submit, worker done, bridge (when the
// pair cannot share a semaphore, the bridge thread sees the worker finish and submits the
// primary's part) and primary done (the probe sees the primary's timeline reach the job and,
// with the bridge, the bridge's submit of it has returned). Modes isolate the cost: `signal`
// (semaphores only), `empty` (empty command buffers), `copy` (a 256-byte copy on each side). It
// inserts no CPU waits into the job path; only the probe's own loop polls.
// Threads: runs on the calling thread (plus the bridge's thread, joined before it returns).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "harness/device_session.hpp"
#include "harness/statistics.hpp"

namespace tandem::harness {

enum class ProbeMode { Signal, Empty, Copy };
enum class ProbeQueue { Graphics, Compute, Transfer };

// "signal", "empty", "copy"; throws tandem::Error naming the text otherwise.
[[nodiscard]] ProbeMode parse_probe_mode(const std::string& text);
// "graphics", "compute", "transfer"; throws tandem::Error naming the text otherwise.
[[nodiscard]] ProbeQueue parse_probe_queue(const std::string& text);

struct ProbeRequest {
    ProbeMode mode = ProbeMode::Copy;
    ProbeQueue queue = ProbeQueue::Transfer; // on both sides
    double rate_hz = 1000;                   // positive and finite
    std::uint32_t jobs = 200;
    std::uint32_t in_flight = 1;
    double timeout_s = 5.0; // a job taking longer is an error
};

// The pair measured, known once its devices are open.
struct ProbeSetup {
    bool gpu_side_sync = false; // false: the host bridge submits the primary's part
    std::uint32_t worker = 0;
    std::string worker_name;
    std::uint32_t primary = 0;
    std::string primary_name;
};

struct ProbeResult {
    ProbeSetup setup;
    std::uint64_t ticks = 0;
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0; // ticks with in_flight jobs already out
    std::uint64_t completed = 0;
    double elapsed_s = 0;
    double ready_rate_hz = 0;
    // Microseconds per stage; `bridge` is empty with GPU-side synchronisation.
    Summary submit, worker_done, bridge, primary_done, total;
};

// Probes the session's first worker against its primary. `on_start` (when set) is called once
// the devices are open, before the first job. Throws tandem::Error (no worker, the worker is the
// primary, a job that does not complete in time, a bridge that stops).
[[nodiscard]] ProbeResult run_probe(const DeviceSession& session, const ProbeRequest& request,
                                    const std::function<void(const ProbeSetup&)>& on_start = {});

} // namespace tandem::harness
