#include "sched/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "core/stats.hpp"

namespace tandem::detail {

namespace {

struct Point {
    double x = 0.0;
    double y = 0.0;
};

// Sorts by x and averages the y of equal x, so repeated calibration points count once.
std::vector<Point> tidy(std::vector<Point> points) {
    std::sort(points.begin(), points.end(),
              [](const Point& a, const Point& b) { return a.x < b.x; });
    std::vector<Point> out;
    std::size_t same = 0;
    for (const auto& p : points) {
        if (!out.empty() && out.back().x == p.x) {
            ++same;
            out.back().y += (p.y - out.back().y) / static_cast<double>(same + 1);
        } else {
            out.push_back(p);
            same = 0;
        }
    }
    return out;
}

// Piecewise linear through `points` (tidy, non-empty, x >= 0). Above the range: the last
// segment's slope (never decreasing). Below: the first segment's slope, never below
// proportional scaling of the first point (a fixed overhead only ever adds). One point:
// proportional scaling (or the point itself when its x is 0).
double interpolate(const std::vector<Point>& points, double x) {
    const auto& first = points.front();
    const auto& last = points.back();
    if (points.size() == 1) {
        return first.x > 0.0 ? first.y * x / first.x : first.y;
    }
    if (x >= last.x) {
        const auto& before = points[points.size() - 2];
        const double slope = std::max(0.0, (last.y - before.y) / (last.x - before.x));
        return last.y + slope * (x - last.x);
    }
    if (x <= first.x) {
        const auto& after = points[1];
        const double slope = std::max(0.0, (after.y - first.y) / (after.x - first.x));
        const double linear = first.y - slope * (first.x - x);
        const double proportional = first.x > 0.0 ? first.y * x / first.x : first.y;
        return std::clamp(linear, proportional, first.y);
    }
    const auto upper = std::upper_bound(points.begin(), points.end(), x,
                                        [](double v, const Point& p) { return v < p.x; });
    const auto& b = *upper;
    const auto& a = *(upper - 1);
    return a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x);
}

} // namespace

std::uint64_t WorkloadShape::pixels() const noexcept {
    return static_cast<std::uint64_t>(width) * height;
}

std::uint64_t WorkloadShape::bytes() const noexcept {
    return output_bytes != 0 ? output_bytes : pixels() * 4;
}

std::optional<double> predict_workload_ms(const DeviceProfile& device, const WorkloadShape& shape) {
    // Group the samples of this kind by work level, each a curve over pixels.
    std::map<std::uint64_t, std::vector<Point>> levels;
    for (const auto& s : device.workloads) {
        if (s.kind == shape.kind && s.content.empty()) {
            levels[s.work].push_back(
                {static_cast<double>(static_cast<std::uint64_t>(s.width) * s.height), s.ms});
        }
    }
    if (levels.empty()) {
        return std::nullopt;
    }
    const auto pixels = static_cast<double>(shape.pixels());
    std::vector<Point> over_work;
    for (auto& [work, points] : levels) {
        over_work.push_back({static_cast<double>(work), interpolate(tidy(points), pixels)});
    }
    if (over_work.size() == 1) {
        // One calibrated level says nothing about how work changes the cost.
        return over_work.front().y;
    }
    return interpolate(tidy(std::move(over_work)), static_cast<double>(shape.work));
}

std::optional<double> calibrated_task_ms(const DeviceProfile& device, const WorkloadShape& shape) {
    if (shape.content.empty()) {
        return std::nullopt;
    }
    for (const auto& s : device.workloads) {
        if (s.content == shape.content && s.kind == shape.kind && s.width == shape.width &&
            s.height == shape.height) {
            return s.ms;
        }
    }
    return std::nullopt;
}

const char* to_string(Stage stage) noexcept {
    switch (stage) {
    case Stage::Execute:
        return "execute";
    case Stage::Prepare:
        return "prepare";
    case Stage::Transfer:
        return "transfer";
    case Stage::Sync:
        return "sync";
    case Stage::Reintegrate:
        return "reintegrate";
    case Stage::Delivery:
        return "delivery";
    }
    return "unknown";
}

const char* to_string(CostSource source) noexcept {
    return source == CostSource::Measured ? "measured" : "profile";
}

double MoveCost::total_ms() const noexcept {
    const double rest = delivery ? delivery->ms : (parts ? parts->total_ms() : 0.0);
    return (prepare ? prepare->ms : 0.0) + rest;
}

double MoveCost::path_ms() const noexcept {
    return parts ? parts->transfer.ms : (delivery ? delivery->ms : 0.0);
}

double MoveCost::primary_ms() const noexcept {
    return parts ? parts->reintegrate.ms : 0.0;
}

void RobustEstimate::add(double ms) noexcept {
    m_samples[m_next] = ms;
    m_next = (m_next + 1) % k_window;
    ++m_count;
}

double RobustEstimate::last() const noexcept {
    return m_count == 0 ? 0.0 : m_samples[(m_next + k_window - 1) % k_window];
}

std::optional<double> RobustEstimate::estimate() const noexcept {
    if (m_count < k_min_samples) {
        return std::nullopt;
    }
    const std::size_t n = std::min(m_count, k_window);
    std::array<double, k_window> recent{};
    // The n most recent samples (when the window is not yet full they are the first n).
    for (std::size_t i = 0; i < n; ++i) {
        recent[i] = m_samples[(m_next + k_window - 1 - i) % k_window];
    }
    return median_in_place(std::span<double>(recent.data(), n));
}

CostModel::CostModel(Profile profile, const std::vector<DeviceInfo>& devices)
    : m_profile(std::move(profile)), m_binding(bind_profile(m_profile, devices)),
      m_present(m_binding.size(), false) {
    for (const auto& d : devices) {
        m_present[d.index] = true;
    }
}

const DeviceProfile* CostModel::device_profile(std::uint32_t device) const noexcept {
    if (device >= m_binding.size() || !m_present[device]) {
        return nullptr;
    }
    return m_profile.device(m_binding[device]);
}

std::optional<double> CostModel::measured(const std::string& task, std::uint32_t device,
                                          Stage stage) const {
    const auto it = m_measured.find(Key{task, device, stage});
    return it == m_measured.end() ? std::nullopt : it->second.estimate();
}

Prediction CostModel::refine(const std::string& task, std::uint32_t device, Stage stage,
                             double profile_ms) const {
    if (const auto ms = measured(task, device, stage)) {
        return {*ms, CostSource::Measured};
    }
    return {profile_ms, CostSource::Profile};
}

std::optional<Prediction> CostModel::execute(const std::string& task, const WorkloadShape& shape,
                                             std::uint32_t device) const {
    if (const auto ms = measured(task, device, Stage::Execute)) {
        return Prediction{*ms, CostSource::Measured};
    }
    const auto* profile = device_profile(device);
    if (profile == nullptr) {
        return std::nullopt;
    }
    const auto reference = predict_workload_ms(*profile, shape);
    if (const auto task_ms = calibrated_task_ms(*profile, shape)) {
        return Prediction{*task_ms, CostSource::Profile, true, reference};
    }
    if (!reference) {
        return std::nullopt;
    }
    return Prediction{*reference, CostSource::Profile, false, reference};
}

std::optional<Prediction> CostModel::prepare(const std::string& task, std::uint32_t worker) const {
    if (const auto ms = measured(task, worker, Stage::Prepare)) {
        return Prediction{*ms, CostSource::Measured};
    }
    const auto* w = device_profile(worker);
    // A profile that never timed preparation (a skeleton of the adapters) leaves it at 0.
    if (w == nullptr || w->prepare_us <= 0.0) {
        return std::nullopt;
    }
    return Prediction{w->prepare_us / 1000.0, CostSource::Profile};
}

std::optional<MoveCost> CostModel::move(const std::string& task, const WorkloadShape& shape,
                                        std::uint32_t worker, std::uint32_t primary,
                                        std::optional<TransferPath> forced) const {
    const auto* w = device_profile(worker);
    const auto* p = device_profile(primary);
    if (w == nullptr || p == nullptr) {
        return std::nullopt;
    }
    const auto* pair = m_profile.pair(w->index, p->index);
    if (pair == nullptr) {
        return measured_move(task, worker, forced);
    }
    const auto bytes = shape.bytes();
    const PathProfile* chosen = nullptr;
    if (forced) {
        chosen = pair->find(*forced);
    } else {
        for (const auto& path : pair->paths) {
            if (chosen == nullptr || path.link.ms_for(bytes) < chosen->link.ms_for(bytes)) {
                chosen = &path;
            }
        }
    }
    if (chosen == nullptr) {
        return std::nullopt;
    }
    MoveCost cost;
    cost.path = chosen->path;
    cost.prepare = prepare(task, worker);
    DeliveryParts parts;
    parts.transfer = refine(task, worker, Stage::Transfer, chosen->link.ms_for(bytes));
    parts.sync = refine(task, worker, Stage::Sync, pair->sync_us / 1000.0);
    parts.reintegrate = refine(task, worker, Stage::Reintegrate, p->reintegrate.ms_for(bytes));
    const bool any_apart = parts.transfer.source == CostSource::Measured ||
                           parts.sync.source == CostSource::Measured ||
                           parts.reintegrate.source == CostSource::Measured;
    const auto delivery = measured(task, worker, Stage::Delivery);
    if (delivery && !any_apart) {
        // Measured as a whole: the one figure replaces the profile's parts.
        cost.delivery = Prediction{*delivery, CostSource::Measured};
    } else {
        cost.parts = parts;
        cost.gpu_side_sync = pair->gpu_side_sync;
    }
    return cost;
}

std::optional<MoveCost> CostModel::measured_move(const std::string& task, std::uint32_t worker,
                                                 std::optional<TransferPath> path) const {
    const auto delivery = measured(task, worker, Stage::Delivery);
    if (!delivery) {
        return std::nullopt;
    }
    MoveCost cost;
    cost.path = path;
    cost.prepare = prepare(task, worker);
    cost.delivery = Prediction{*delivery, CostSource::Measured};
    return cost;
}

bool CostModel::observe(const std::string& task, std::uint32_t device, Stage stage, double ms) {
    if (!std::isfinite(ms) || ms < 0.0) {
        return false;
    }
    m_measured[Key{task, device, stage}].add(ms);
    return true;
}

void CostModel::forget(const std::string& task) {
    for (auto it = m_measured.begin(); it != m_measured.end();) {
        it = std::get<0>(it->first) == task ? m_measured.erase(it) : std::next(it);
    }
}

} // namespace tandem::detail
