#include "sync/pair_bridge.hpp"

#include <algorithm>
#include <chrono>

#include "core/cpu.hpp"
#include "core/log.hpp"
#include "sync/host_bridge.hpp"

namespace tandem::detail {

namespace {
// The thread polls the worker timelines instead of blocking in vkWaitSemaphores: a blocking wait
// can wake milliseconds late (seen with CUDA-signalled semaphores on NVIDIA), one thread cannot
// block on several devices' semaphores at once, and polling notices a new forward or a detach at
// once. It spins while a waiting HostBridge asks (Options::spin), sleeps k_first_sleep at a time
// while a wait is young (k_short_sleeps_for), then sleeps in growing steps up to the waiting
// bridges' Options::max_sleep, so a long wait costs little CPU. Serving a bridge that never spins
// (Options::spin 0: a CPU device on the pair, or a small machine), it sleeps with a tight timer
// slack (core/cpu.hpp), so that its short sleeps are short.
constexpr auto k_first_sleep = std::chrono::microseconds(10);
} // namespace

PairBridge::PairBridge(std::string name) : m_name(std::move(name)) {}

PairBridge::~PairBridge() {
    // Every HostBridge holds its pair, so none is attached now and the thread has ended.
    std::lock_guard lifecycle(m_lifecycle);
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

std::size_t PairBridge::channels() const {
    std::lock_guard lock(m_mutex);
    return m_channels.size();
}

bool PairBridge::running() const {
    std::lock_guard lock(m_mutex);
    return !m_channels.empty();
}

std::string PairBridge::device_failure() const {
    std::lock_guard lock(m_mutex);
    return m_device_failure;
}

void PairBridge::attach(HostBridge& channel) {
    std::lock_guard lifecycle(m_lifecycle);
    bool halted = false;
    {
        std::lock_guard lock(m_mutex);
        m_channels.push_back(&channel);
        ++m_kicks; // a bridge attached to a failed pair fails on the thread's next pass
        halted = m_halted;
    }
    if (halted) {
        return;
    }
    if (!m_thread.joinable()) {
        // Its messages go where the first attach's do (a Runtime's logger, on its threads).
        m_thread = start_logged_thread([this] { run(); });
        log_debug("sync", "{}: bridge thread started", m_name);
    } else {
        m_cv.notify_one();
    }
}

void PairBridge::detach(HostBridge& channel) {
    std::lock_guard lifecycle(m_lifecycle);
    bool last = false;
    {
        std::unique_lock lock(m_mutex);
        m_served_cv.wait(lock, [&] { return m_serving != &channel; });
        m_channels.erase(std::remove(m_channels.begin(), m_channels.end(), &channel),
                         m_channels.end());
        last = m_channels.empty();
        m_stop = last || m_halted;
        // The thread's pass may have skipped a bridge the erase moved: it passes again.
        ++m_kicks;
    }
    m_cv.notify_one();
    if (last) {
        if (m_thread.joinable()) {
            m_thread.join();
        }
        std::lock_guard lock(m_mutex);
        m_stop = m_halted;
        log_debug("sync", "{}: bridge thread ended", m_name);
    }
}

void PairBridge::halt() {
    std::lock_guard lifecycle(m_lifecycle);
    {
        std::lock_guard lock(m_mutex);
        m_halted = true;
        m_stop = true;
    }
    m_cv.notify_one();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void PairBridge::kick() {
    {
        std::lock_guard lock(m_mutex);
        ++m_kicks;
    }
    m_cv.notify_one();
}

void PairBridge::fail_device(const std::string& message) {
    std::lock_guard lock(m_mutex);
    if (m_device_failure.empty()) {
        m_device_failure = message;
        // Release: a HostBridge that sees the flag also sees the message.
        m_device_failed.store(true, std::memory_order_release);
    }
}

void PairBridge::run() {
    std::unique_lock lock(m_mutex);
    std::uint64_t seen = 0;
    bool pending = false;
    auto sleep = k_first_sleep;
    bool tightened = false; // this thread's timer slack (core/cpu.hpp)
    for (;;) {
        if (!pending) {
            m_cv.wait(lock, [&] { return m_stop || m_kicks != seen; });
        }
        if (m_stop) {
            return;
        }
        // Kicks from here on wake the next wait at once: their forwards may come after the poll.
        seen = m_kicks;
        pending = false;
        bool ran = false;
        bool spin = false;
        bool young = false;
        bool sleeps = false;
        auto max_sleep = std::chrono::microseconds(0);
        for (std::size_t i = 0; i < m_channels.size(); ++i) {
            HostBridge* channel = m_channels[i];
            m_serving = channel;
            lock.unlock();
            HostBridge::Poll poll = channel->poll();
            if (!poll.device_failure.empty()) {
                fail_device(poll.device_failure);
            }
            lock.lock();
            m_serving = nullptr;
            m_served_cv.notify_all();
            ran = ran || poll.ran;
            pending = pending || poll.pending;
            spin = spin || poll.spin;
            young = young || poll.young;
            sleeps = sleeps || poll.sleeps;
            max_sleep = std::max(max_sleep, poll.max_sleep);
            if (!poll.device_failure.empty()) {
                pending = true; // one more pass fails every other bridge of the pair
            }
        }
        if (!pending) {
            continue;
        }
        if (ran) {
            sleep = k_first_sleep;
        } else if (spin) {
            sleep = k_first_sleep; // a wait that just began: its sleeps start short again
            lock.unlock();
            std::this_thread::yield();
            lock.lock();
        } else {
            if (sleeps && !tightened) {
                tighten_timer_slack(); // a bridge that never spins wakes on time
                tightened = true;
            }
            m_cv.wait_for(lock, sleep, [&] { return m_stop || m_kicks != seen; });
            // A young wait keeps its sleeps short (k_short_sleeps_for); an older one grows them.
            sleep = young ? k_first_sleep : std::min(sleep * 2, std::max(max_sleep, k_first_sleep));
        }
    }
}

} // namespace tandem::detail
