#include "runtime/device_pairs.hpp"

#include "core/capabilities.hpp"
#include "tandem/error.hpp"

#if TANDEM_HAVE_TRANSFER
#include "transfer/path_health.hpp"
#include "transfer/transfer_path.hpp"
#endif

namespace tandem::detail {
namespace {

#if TANDEM_HAVE_TRANSFER
std::shared_ptr<PathHealth> new_health() {
    return std::make_shared<PathHealth>();
}

// While the runtime's trace records: each band a stream's bridge hands on, as an instant on its
// direction's bridge track (when the sender's copy of it was seen finished and the receiver's
// was submitted).
class TracedHandOffs final : public TransferObserver {
public:
    TracedHandOffs(TraceLog& trace, std::uint32_t track, std::string stream)
        : m_trace(trace), m_track(track), m_stream(std::move(stream)) {}
    void on_band_handed(std::uint32_t slot, std::uint32_t band) noexcept override {
        try {
            const auto now = TraceLog::Clock::now();
            m_trace.span(m_track,
                         "handed slot " + std::to_string(slot) + " band " + std::to_string(band),
                         now, now, 0, m_stream);
        } catch (...) {
            // Out of memory: the trace lacks the event.
        }
    }

private:
    TraceLog& m_trace;
    std::uint32_t m_track;
    std::string m_stream;
};
#else
std::shared_ptr<PathHealth> new_health() {
    return nullptr;
}
#endif

} // namespace

DevicePair::DevicePair(const Device& a, const Device& b, StagingCopierFactory cuda_stand_in,
                       TraceLog* trace)
    : m_trace(trace), m_health(new_health()) {
    m_directions[0].from = &a;
    m_directions[0].to = &b;
    m_directions[1].from = &b;
    m_directions[1].to = &a;
    for (Direction& d : m_directions) {
        d.info = query_pair_info(d.from->info(), d.to->info());
    }
    stand_in_for_cuda(cuda_stand_in);
}

void DevicePair::stand_in_for_cuda(const StagingCopierFactory& copier) {
    for (Direction& d : m_directions) {
        if (copier && allow_cuda_stand_in(d.info)) {
            d.cuda_copier = copier;
        }
    }
}

const PairInfo& DevicePair::info(const Device& from) const {
    return direction(from.info().index).info;
}

std::unique_ptr<SlotTransport> DevicePair::open_stream(const Device& from, TransferDesc desc) {
    const std::size_t i = index_of(from.info().index);
    const Direction& d = m_directions[i];
    {
        std::lock_guard lock(m_mutex);
        desc.bridge = m_bridges[i].lock();
        if (!desc.bridge) {
            desc.bridge =
                std::make_shared<PairBridge>(d.from->label() + "->" + d.to->label() + " bridge");
            m_bridges[i] = desc.bridge;
            if (m_halted) {
                desc.bridge->halt();
            }
        }
    }
    desc.cuda_copier = d.cuda_copier;
#if TANDEM_HAVE_TRANSFER
    if (m_trace != nullptr && m_trace->enabled()) {
        const std::string track = d.from->label() + "->" + d.to->label() + " bridge";
        desc.observer =
            std::make_shared<TracedHandOffs>(*m_trace, m_trace->track(track), desc.name);
    }
#endif
    return make_link_transport(*d.from, *d.to, d.info, desc, m_health.get());
}

OpenedStream DevicePair::open_with_images(const Device& from, const TransferDesc& desc,
                                          const SlotImageUsage& images, std::string_view what) {
    // Each round returns or drops a path (open_stream throws once none is left).
    for (;;) {
        OpenedStream out;
        out.link = open_stream(from, desc);
        try {
            out.images = make_slot_images(*out.link, desc.name, desc.slots, images);
            return out;
        } catch (const Error& e) {
            if (!out.link->images_are_the_path() || e.result() == VK_ERROR_DEVICE_LOST) {
                throw;
            }
            drop(from.info().index, out.link->path_name(), std::string(what) + e.what());
        }
    }
}

#if TANDEM_HAVE_TRANSFER
std::optional<TransferPath> DevicePair::path(const Device& from,
                                             std::optional<TransferPath> forced) const {
    try {
        return negotiate_path(m_health->restrict(direction(from.info().index).info), forced);
    } catch (const Error&) {
        return std::nullopt; // not allowed (forced) or none left
    }
}

void DevicePair::drop(std::uint32_t from, const std::string& path, const std::string& reason) {
    const Direction& d = direction(from);
    if (const auto kind = parse_transfer_path(path)) {
        (void)m_health->drop(d.from->info().index, d.to->info().index, *kind, reason);
    }
}

std::vector<DroppedTransferPath> DevicePair::dropped(std::uint32_t from) const {
    const Direction& d = direction(from);
    std::vector<DroppedTransferPath> out;
    for (const auto& dropped : m_health->dropped(d.from->info().index, d.to->info().index)) {
        out.push_back({to_string(dropped.path), dropped.reason});
    }
    return out;
}

std::uint64_t DevicePair::drops() const noexcept {
    return m_health->drops();
}
#else
std::optional<TransferPath> DevicePair::path(const Device& /*from*/,
                                             std::optional<TransferPath> /*forced*/) const {
    return std::nullopt;
}

void DevicePair::drop(std::uint32_t /*from*/, const std::string& /*path*/,
                      const std::string& /*reason*/) {}

std::vector<DroppedTransferPath> DevicePair::dropped(std::uint32_t /*from*/) const {
    return {};
}

std::uint64_t DevicePair::drops() const noexcept {
    return 0;
}
#endif

std::size_t DevicePair::bridge_threads() const {
    std::lock_guard lock(m_mutex);
    std::size_t n = 0;
    for (const auto& entry : m_bridges) {
        if (const auto bridge = entry.lock(); bridge && bridge->running()) {
            ++n;
        }
    }
    return n;
}

DevicePair& DevicePairs::pair(const Device& a, const Device& b) {
    std::lock_guard lock(m_mutex);
    std::unique_ptr<DevicePair>& entry = m_pairs[key(a.info().index, b.info().index)];
    if (!entry) {
        entry = std::make_unique<DevicePair>(a, b, m_cuda_stand_in, m_trace);
        if (m_halted) {
            entry->halt_bridges();
        }
    }
    return *entry;
}

void DevicePair::halt_bridges() {
    std::vector<std::shared_ptr<PairBridge>> running;
    {
        std::lock_guard lock(m_mutex);
        m_halted = true;
        for (const auto& entry : m_bridges) {
            if (auto bridge = entry.lock()) {
                running.push_back(std::move(bridge));
            }
        }
    }
    for (const auto& bridge : running) {
        bridge->halt();
    }
}

void DevicePairs::halt_bridges() {
    // Each pair's threads are joined outside the lock (pairs stay in the map to the end).
    std::vector<DevicePair*> pairs;
    {
        std::lock_guard lock(m_mutex);
        m_halted = true;
        for (const auto& [k, p] : m_pairs) {
            pairs.push_back(p.get());
        }
    }
    for (DevicePair* p : pairs) {
        p->halt_bridges();
    }
}

DevicePair* DevicePairs::find(std::uint32_t a, std::uint32_t b) const {
    std::lock_guard lock(m_mutex);
    const auto it = m_pairs.find(key(a, b));
    return it != m_pairs.end() ? it->second.get() : nullptr;
}

void DevicePairs::drop(std::uint32_t from, std::uint32_t to, const std::string& path,
                       const std::string& reason) {
    if (DevicePair* p = find(from, to)) {
        p->drop(from, path, reason);
    }
}

std::vector<DroppedTransferPath> DevicePairs::dropped(std::uint32_t from, std::uint32_t to) const {
    const DevicePair* p = find(from, to);
    return p != nullptr ? p->dropped(from) : std::vector<DroppedTransferPath>{};
}

std::uint64_t DevicePairs::drops() const {
    std::lock_guard lock(m_mutex);
    std::uint64_t n = 0;
    for (const auto& [k, p] : m_pairs) {
        n += p->drops();
    }
    return n;
}

std::size_t DevicePairs::bridge_threads() const {
    std::lock_guard lock(m_mutex);
    std::size_t n = 0;
    for (const auto& [k, p] : m_pairs) {
        n += p->bridge_threads();
    }
    return n;
}

void DevicePairs::stand_in_for_cuda(StagingCopierFactory copier) {
    std::lock_guard lock(m_mutex);
    m_cuda_stand_in = std::move(copier);
    for (const auto& [k, p] : m_pairs) {
        p->stand_in_for_cuda(m_cuda_stand_in);
    }
}

} // namespace tandem::detail
