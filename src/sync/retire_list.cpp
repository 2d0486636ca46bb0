#include "sync/retire_list.hpp"

#include <algorithm>

#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

namespace {

constexpr QueueRole k_roles[] = {QueueRole::Main, QueueRole::Transfer, QueueRole::SecondTransfer,
                                 QueueRole::Compute};

} // namespace

RetireList::RetireList(const std::vector<const Device*>& devices) {
    for (const Device* device : devices) {
        std::vector<VkQueue> seen;
        for (const QueueRole role : k_roles) {
            const Queue& queue = device->queue(role);
            if (queue.handle() == VK_NULL_HANDLE ||
                std::find(seen.begin(), seen.end(), queue.handle()) != seen.end()) {
                continue; // roles share VkQueues
            }
            seen.push_back(queue.handle());
            Marker m;
            m.device = device;
            m.queue = &queue;
            m.timeline = std::make_unique<TimelineSemaphore>(
                *device, device->label() + " retire marker " + std::to_string(seen.size() - 1));
            m_markers.push_back(std::move(m));
        }
    }
}

RetireList::~RetireList() {
    clear();
}

void RetireList::retire(std::unique_ptr<Retired> object, std::vector<RetirePoint> points,
                        std::vector<const Device*> devices) {
    std::erase_if(points, [](const RetirePoint& p) { return p.value == 0; });
    Entry e;
    e.object = std::move(object);
    e.points = std::move(points);
    e.devices = std::move(devices);
    std::lock_guard lock(m_mutex);
    m_entries.push_back(std::move(e));
    ++m_held;
}

bool RetireList::reached(const RetirePoint& point) noexcept {
    std::uint64_t value = 0;
    VkResult r = VK_SUCCESS;
    {
        const auto guard = point.device->host_semaphore_guard();
        r = vkGetSemaphoreCounterValue(point.device->handle(), point.semaphore, &value);
    }
    return r == VK_SUCCESS && value >= point.value;
}

bool RetireList::mark(const Device& device, std::vector<RetirePoint>& out) noexcept {
    for (Marker& m : m_markers) {
        if (m.device != &device) {
            continue;
        }
        const VkSemaphoreSubmitInfo signal =
            m.timeline->submit_info(m.submitted + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        if (m.queue->submit_one(VK_NULL_HANDLE, {}, {&signal, 1}) != VK_SUCCESS) {
            return false;
        }
        m.submitted = signal.value;
        out.push_back({&device, m.timeline->handle(), m.submitted});
    }
    return true;
}

void RetireList::collect() noexcept {
    std::unique_lock busy(m_collecting, std::try_to_lock);
    if (!busy.owns_lock()) {
        return;
    }
    std::vector<Entry> work;
    {
        std::lock_guard lock(m_mutex);
        if (m_entries.empty()) {
            return;
        }
        work.swap(m_entries);
    }
    std::vector<std::unique_ptr<Retired>> done;
    std::vector<Entry*> to_mark;
    std::vector<const Device*> devices;
    try {
        for (Entry& e : work) {
            if (e.marked) {
                if (std::all_of(e.markers.begin(), e.markers.end(), reached)) {
                    done.push_back(std::move(e.object));
                }
            } else if (std::all_of(e.points.begin(), e.points.end(), reached)) {
                to_mark.push_back(&e);
                for (const Device* d : e.devices) {
                    if (std::find(devices.begin(), devices.end(), d) == devices.end()) {
                        devices.push_back(d);
                    }
                }
            }
        }
        // One marker per queue for every entry that passed its points in this pass.
        std::vector<std::pair<const Device*, std::vector<RetirePoint>>> marks;
        for (const Device* d : devices) {
            std::vector<RetirePoint> points;
            if (mark(*d, points)) {
                marks.emplace_back(d, std::move(points));
            }
        }
        for (Entry* e : to_mark) {
            std::vector<RetirePoint> markers;
            bool all = true;
            for (const Device* d : e->devices) {
                const auto it = std::find_if(marks.begin(), marks.end(),
                                             [&](const auto& m) { return m.first == d; });
                if (it == marks.end()) {
                    all = false; // its device could not be marked: tried again next pass
                    break;
                }
                markers.insert(markers.end(), it->second.begin(), it->second.end());
            }
            if (all) {
                e->markers = std::move(markers);
                e->marked = true;
            }
        }
    } catch (...) {
        // Out of memory: what was not decided waits for the next pass.
    }
    {
        std::lock_guard lock(m_mutex);
        for (Entry& e : work) {
            if (e.object) {
                // Out of memory here ends the process (noexcept): dropping the entry would free
                // what the GPU may still use.
                m_entries.push_back(std::move(e));
            }
        }
    }
    const std::size_t destroyed = done.size();
    done.clear(); // destroyed outside the lock
    std::lock_guard lock(m_mutex);
    m_held -= destroyed;
}

std::size_t RetireList::pending() const {
    std::lock_guard lock(m_mutex);
    return m_held;
}

bool RetireList::drain(std::chrono::steady_clock::time_point deadline) noexcept {
    std::vector<Entry> all;
    {
        std::lock_guard lock(m_mutex);
        all.swap(m_entries);
    }
    bool reached = true;
    for (const Entry& e : all) {
        for (const auto* points : {&e.points, &e.markers}) {
            for (const RetirePoint& p : *points) {
                const auto left = std::max(std::chrono::steady_clock::duration::zero(),
                                           deadline - std::chrono::steady_clock::now());
                if (wait_timeline(*p.device, p.semaphore, p.value,
                                  std::chrono::duration_cast<std::chrono::nanoseconds>(left),
                                  "retire list drain") != VK_SUCCESS) {
                    reached = false;
                }
            }
        }
    }
    all.clear();
    std::lock_guard lock(m_mutex);
    m_held = m_entries.size();
    return reached;
}

void RetireList::clear() noexcept {
    std::vector<Entry> all;
    {
        std::lock_guard lock(m_mutex);
        all.swap(m_entries);
    }
    all.clear();
    std::lock_guard lock(m_mutex);
    m_held = m_entries.size();
}

} // namespace tandem::detail
