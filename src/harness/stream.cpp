#include "harness/stream.hpp"

#include <cmath>

#include "core/log.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {

Stream::Stream(Runtime& runtime, TaskId task, const StreamOptions& options,
               std::vector<std::byte> snapshot)
    : m_runtime(runtime), m_task(task), m_options(options), m_snapshot(std::move(snapshot)) {
    if (!std::isfinite(options.rate_hz) || options.rate_hz <= 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Stream rate " + std::to_string(options.rate_hz) +
                        " Hz is not a positive finite number",
                    "Give a rate such as 60, 37.5 or 37,5");
    }
}

Stream::~Stream() {
    stop();
}

void Stream::start() {
    std::lock_guard lock(m_mutex);
    if (m_thread.joinable()) {
        return;
    }
    m_ready_base = m_runtime.stats(m_task).ready;
    m_start = std::chrono::steady_clock::now();
    m_stop = false;
    m_running.store(true, std::memory_order_release);
    m_thread = detail::start_logged_thread([this] { run(); });
}

void Stream::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    std::lock_guard lock(m_mutex);
    if (m_running.exchange(false, std::memory_order_acq_rel)) {
        m_end = std::chrono::steady_clock::now();
    }
}

void Stream::run() {
    using Clock = std::chrono::steady_clock;
    const auto period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / m_options.rate_hz));
    auto next = Clock::now();
    bool warned = false;
    for (;;) {
        next += period;
        const auto now = Clock::now();
        if (now > next + period) {
            next = now; // fell behind by more than a period: skip the missed ticks
        }
        {
            std::unique_lock lock(m_mutex);
            if (m_cv.wait_until(lock, next, [&] { return m_stop; })) {
                return;
            }
        }
        m_ticks.fetch_add(1, std::memory_order_relaxed);
        const SubmitResult r = m_runtime.submit(m_task, m_snapshot);
        switch (r.status) {
        case SubmitStatus::Accepted: {
            const auto accepted = m_accepted.fetch_add(1, std::memory_order_relaxed) + 1;
            if (m_options.limit && accepted >= *m_options.limit) {
                m_finished.store(true, std::memory_order_release);
                return;
            }
            break;
        }
        case SubmitStatus::Busy:
        case SubmitStatus::Preparing: // nothing changed either way
            m_busy.fetch_add(1, std::memory_order_relaxed);
            break;
        case SubmitStatus::Failed:
            m_failed.fetch_add(1, std::memory_order_relaxed);
            if (!m_options.quiet && !warned) {
                detail::log_warn("cli", "stream: submit failed: {}", r.reason);
                warned = true;
            }
            break;
        }
    }
}

StreamStats Stream::stats() const {
    StreamStats out;
    out.target_hz = m_options.rate_hz;
    out.task = m_runtime.stats(m_task);
    {
        std::lock_guard lock(m_mutex);
        const auto end =
            m_running.load(std::memory_order_acquire) ? std::chrono::steady_clock::now() : m_end;
        out.elapsed_s = std::chrono::duration<double>(end - m_start).count();
        out.ready = out.task.ready - m_ready_base;
    }
    out.ticks = m_ticks.load(std::memory_order_relaxed);
    out.accepted = m_accepted.load(std::memory_order_relaxed);
    out.busy = m_busy.load(std::memory_order_relaxed);
    out.failed = m_failed.load(std::memory_order_relaxed);
    out.in_flight = out.task.in_flight;
    out.finished = finished();
    if (out.elapsed_s > 0) {
        out.tick_hz = static_cast<double>(out.ticks) / out.elapsed_s;
        out.accepted_hz = static_cast<double>(out.accepted) / out.elapsed_s;
        out.busy_hz = static_cast<double>(out.busy) / out.elapsed_s;
        out.failed_hz = static_cast<double>(out.failed) / out.elapsed_s;
        out.ready_hz = static_cast<double>(out.ready) / out.elapsed_s;
    }
    return out;
}

} // namespace tandem::harness
