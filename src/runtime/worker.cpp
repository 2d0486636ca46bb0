#include "runtime/worker.hpp"

#include <spdlog/spdlog.h>

namespace tandem::detail {

Worker::Worker(const Device& device, std::uint32_t index, JobFn on_job, JobFn on_drop)
    : m_device(device), m_index(index), m_on_job(std::move(on_job)), m_on_drop(std::move(on_drop)),
      m_work(device, device.label() + " work timeline") {
    m_thread = std::thread([this] { run(); });
}

Worker::~Worker() {
    stop();
}

void Worker::enqueue(const WorkerJob& job) {
    {
        std::lock_guard lock(m_mutex);
        if (m_stop) {
            return;
        }
        m_queue.push_back(job);
    }
    m_cv.notify_one();
}

void Worker::hold(const Task* task, std::uint64_t generation) {
    std::lock_guard lock(m_mutex);
    m_hold.emplace(task, generation);
}

void Worker::release_held() {
    {
        std::lock_guard lock(m_mutex);
        m_hold.clear();
        for (auto it = m_held.rbegin(); it != m_held.rend(); ++it) {
            m_queue.push_front(*it);
        }
        m_held.clear();
    }
    m_cv.notify_one();
}

std::string Worker::lost_reason() const {
    std::lock_guard lock(m_mutex);
    return m_lost_reason;
}

bool Worker::mark_lost(const std::string& reason) {
    {
        std::lock_guard lock(m_mutex);
        if (m_lost.load(std::memory_order_relaxed)) {
            return false;
        }
        m_lost_reason = reason;
        // Release: a reader that sees lost() also sees the reason (it locks m_mutex anyway).
        m_lost.store(true, std::memory_order_release);
    }
    spdlog::warn("{} is lost: {}", label(), reason);
    return true;
}

void Worker::stop() {
    std::deque<WorkerJob> dropped;
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        dropped.swap(m_queue);
        for (const auto& job : m_held) {
            dropped.push_back(job);
        }
        m_held.clear();
    }
    m_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    for (const auto& job : dropped) {
        m_on_drop(*this, job);
    }
}

void Worker::run() {
    for (;;) {
        WorkerJob job;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_stop) {
                return;
            }
            job = m_queue.front();
            m_queue.pop_front();
            if (m_hold.count({job.task, job.generation}) != 0) {
                m_held.push_back(job);
                continue;
            }
        }
        m_on_job(*this, job);
    }
}

} // namespace tandem::detail
