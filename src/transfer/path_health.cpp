#include "transfer/path_health.hpp"

#include <utility>

namespace tandem::detail {

const PathHealth::Entry* PathHealth::find(std::uint32_t worker, std::uint32_t primary,
                                          TransferPath path) const noexcept {
    for (const Entry& e : m_entries) {
        if (e.worker == worker && e.primary == primary && e.path == path) {
            return &e;
        }
    }
    return nullptr;
}

bool PathHealth::passed(std::uint32_t worker, std::uint32_t primary, TransferPath path) const {
    std::lock_guard lock(m_mutex);
    const Entry* e = find(worker, primary, path);
    return e != nullptr && e->state == State::Passed;
}

void PathHealth::mark_passed(std::uint32_t worker, std::uint32_t primary, TransferPath path) {
    std::lock_guard lock(m_mutex);
    if (find(worker, primary, path) == nullptr) {
        m_entries.push_back({worker, primary, path, State::Passed, {}});
    }
}

bool PathHealth::drop(std::uint32_t worker, std::uint32_t primary, TransferPath path,
                      std::string reason) {
    std::lock_guard lock(m_mutex);
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
        if (it->worker == worker && it->primary == primary && it->path == path) {
            if (it->state == State::Dropped) {
                return false;
            }
            // Re-added at the end, so entries read in order list the drops as they happened.
            m_entries.erase(it);
            break;
        }
    }
    m_entries.push_back({worker, primary, path, State::Dropped, std::move(reason)});
    m_drops.fetch_add(1, std::memory_order_release); // after the entry, under the lock
    return true;
}

std::optional<std::string> PathHealth::dropped_reason(std::uint32_t worker, std::uint32_t primary,
                                                      TransferPath path) const {
    std::lock_guard lock(m_mutex);
    const Entry* e = find(worker, primary, path);
    if (e == nullptr || e->state != State::Dropped) {
        return std::nullopt;
    }
    return e->reason;
}

std::vector<PathHealth::Dropped> PathHealth::dropped(std::uint32_t worker,
                                                     std::uint32_t primary) const {
    std::lock_guard lock(m_mutex);
    std::vector<Dropped> out;
    for (const Entry& e : m_entries) {
        if (e.worker == worker && e.primary == primary && e.state == State::Dropped) {
            out.push_back({e.path, e.reason});
        }
    }
    return out;
}

PairInfo PathHealth::restrict(const PairInfo& pair) const {
    PairInfo out = pair;
    for (PathAvailability& a : out.paths) {
        if (auto why = dropped_reason(pair.worker, pair.primary, a.path)) {
            a.available = false;
            a.reason = "dropped for this pair: " + *why;
        }
    }
    return out;
}

} // namespace tandem::detail
