#include "sched/explanation.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "tandem/error.hpp"

namespace tandem::detail {

using nlohmann::json;

namespace {

json prediction_json(const std::optional<Prediction>& p) {
    if (!p) {
        return nullptr;
    }
    json out = {{"ms", p->ms}, {"source", to_string(p->source)}};
    // An execute cost from the profile: its sample of this very task, or the reference
    // workloads' prediction.
    if (p->source == CostSource::Profile && (p->task_calibrated || p->reference_ms)) {
        out["calibrated"] = p->task_calibrated ? "task" : "reference";
    }
    if (p->reference_ms) {
        out["reference_ms"] = *p->reference_ms;
    }
    return out;
}

std::string ms(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f ms", value);
    return buffer;
}

// "0.035 ms (measured)", "0.035 ms (profile)" (from the reference workloads) or "0.035 ms
// (task)" (the profile measured this very task).
std::string prediction_text(const Prediction& p) {
    return ms(p.ms) + " (" + source_of(p) + ")";
}

std::string format(const char* pattern, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, pattern, value);
    return buffer;
}

std::string shape_text(const WorkloadShape& shape) {
    std::string text =
        shape.kind + " " + std::to_string(shape.width) + "x" + std::to_string(shape.height);
    if (shape.work != 0) {
        text += ", work " + std::to_string(shape.work);
    }
    return text;
}

} // namespace

std::optional<std::uint32_t> PlacementPlan::device_of(std::string_view task) const {
    for (const auto& t : tasks) {
        if (t.task == task) {
            return t.chosen;
        }
    }
    return std::nullopt;
}

std::size_t PlacementPlan::moves() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(tasks.begin(), tasks.end(), [](const auto& t) { return t.moved; }));
}

const char* source_of(const Prediction& p) noexcept {
    return p.source == CostSource::Profile && p.task_calibrated ? "task" : to_string(p.source);
}

std::string describe_move(const MoveCost& m) {
    std::string text;
    if (m.prepare) {
        text = "prepare " + prediction_text(*m.prepare) + " + ";
    }
    const std::string over = m.path ? std::string(" over ") + to_string(*m.path) : "";
    if (m.delivery) {
        return text + "delivery " + ms(m.delivery->ms) + over + " (" + source_of(*m.delivery) +
               ", as a whole)";
    }
    if (!m.parts) {
        return text + "no delivery cost";
    }
    const auto& p = *m.parts;
    return text + "transfer " + ms(p.transfer.ms) + over + " (" + source_of(p.transfer) +
           ") + sync " + ms(p.sync.ms) + (m.gpu_side_sync ? " GPU-side" : " via the host bridge") +
           " (" + source_of(p.sync) + ") + reintegrate " + prediction_text(p.reintegrate);
}

json to_json(const DeviceEstimate& d) {
    json move = nullptr;
    if (d.move) {
        const auto& m = *d.move;
        const auto part = [&](const Prediction DeliveryParts::*member) {
            return m.parts ? prediction_json((*m.parts).*member) : json(nullptr);
        };
        move = {{"prepare", prediction_json(m.prepare)},
                {"path", m.path ? json(to_string(*m.path)) : json(nullptr)},
                {"transfer", part(&DeliveryParts::transfer)},
                {"sync", part(&DeliveryParts::sync)},
                {"sync_mode", m.parts ? json(m.gpu_side_sync ? "gpu" : "bridge") : json(nullptr)},
                {"reintegrate", part(&DeliveryParts::reintegrate)},
                {"delivery", prediction_json(m.delivery)},
                {"total_ms", m.total_ms()}};
    }
    json out = {{"device", d.device},
                {"role", d.primary ? "primary" : "worker"},
                {"candidate", d.candidate},
                {"execute", prediction_json(d.execute)},
                {"move", move},
                {"charge_ms", d.charge_ms},
                {"load_fraction", d.load_fraction}};
    if (!d.primary) {
        out["gain_ms"] = d.gain_ms;
        out["net_gain_ms"] = d.gain_ms - d.charge_ms;
        out["opening_of"] = d.opening_of ? json(*d.opening_of) : json(nullptr);
        out["treated_as_separate"] = d.treated_as_separate;
    }
    out["excluded"] = d.excluded.empty() ? json(nullptr) : json(d.excluded);
    return out;
}

json to_json(const Explanation& e) {
    json devices = json::array();
    for (const auto& d : e.devices) {
        devices.push_back(to_json(d));
    }
    return {{"task", e.task},
            {"shape",
             {{"kind", e.shape.kind},
              {"width", e.shape.width},
              {"height", e.shape.height},
              {"work", e.shape.work},
              {"bytes", e.shape.bytes()}}},
            {"request", to_string(e.request)},
            {"rate_hz", e.rate_hz},
            {"previous", e.previous ? json(*e.previous) : json(nullptr)},
            {"chosen", e.chosen},
            {"moved", e.moved},
            {"lost_move", e.lost_move},
            {"margin_ms", e.margin_ms},
            {"devices", devices},
            {"with", e.with.empty() ? json(nullptr) : json(e.with)},
            {"chain", e.chain},
            {"reason", e.reason}};
}

json to_json(const PlacementPlan& plan) {
    json tasks = json::array();
    for (const auto& t : plan.tasks) {
        tasks.push_back(to_json(t));
    }
    json devices = json::array();
    for (const auto& d : plan.devices) {
        json entry = {{"device", d.device},
                      {"role", d.primary ? "primary" : "worker"},
                      {"lost", d.lost},
                      {"load_fraction", d.load_fraction},
                      {"shares_with", d.shares_with},
                      {"device_load_fraction", d.device_load_fraction},
                      {"over_capacity", d.over_capacity},
                      {"tasks", d.tasks}};
        entry["capacity"] = d.primary || d.capacity <= 0.0 ? json(nullptr) : json(d.capacity);
        devices.push_back(entry);
    }
    return {{"decision", plan.decision},
            {"method", plan.method},
            {"predicted_primary_frame_ms", plan.predicted_primary_frame_ms},
            {"moves", plan.moves()},
            {"openings", plan.openings},
            {"openings_are_separate", plan.openings_are_separate},
            {"devices", devices},
            {"tasks", tasks}};
}

std::string to_text(const Explanation& e) {
    std::string text = "task \"" + e.task + "\" (" + shape_text(e.shape) + ", " +
                       format("%g Hz", e.rate_hz) + ", placement " + to_string(e.request) +
                       "): adapter " + std::to_string(e.chosen);
    if (e.moved && e.previous) {
        text += " (moved from adapter " + std::to_string(*e.previous) + ")";
    } else if (!e.previous) {
        text += " (new)";
    }
    text += "\n";
    for (const auto& d : e.devices) {
        text += "  adapter " + std::to_string(d.device) + (d.primary ? " primary" : " worker") +
                ": execute " + (d.execute ? prediction_text(*d.execute) : std::string("unknown"));
        if (!d.primary) {
            text += ", load " + format("%.0f%%", d.load_fraction * 100.0) + ", frees " +
                    format("%.3f ms", d.gain_ms);
        }
        text += "\n";
        if (d.move) {
            text += "    move " + format("%.3f ms", d.move->total_ms()) + ": " +
                    describe_move(*d.move) + "\n";
        }
        if (!d.primary && !d.candidate) {
            text += "    not a candidate: " + d.excluded + "\n";
        } else if (d.treated_as_separate && d.opening_of) {
            text += "    an opening of the same device as adapter " +
                    std::to_string(*d.opening_of) + ", treated as a separate device as asked\n";
        }
    }
    text += "  (per update; margin " + format("%.3f ms", e.margin_ms) + ")\n";
    text += "  why: " + e.reason + "\n";
    return text;
}

std::string to_text(const PlacementPlan& plan) {
    std::string text = "placement decision " + std::to_string(plan.decision) + " (" + plan.method +
                       "): predicted primary frame " +
                       format("%.3f ms", plan.predicted_primary_frame_ms) + ", " +
                       std::to_string(plan.moves()) + " move(s)\n";
    for (const auto& sentence : plan.openings) {
        text += "  " + sentence + "\n";
    }
    for (const auto& d : plan.devices) {
        text += "  adapter " + std::to_string(d.device) + (d.primary ? " primary" : " worker");
        if (d.lost) {
            text += ": lost\n";
            continue;
        }
        text += ": load " + format("%.0f%%", d.load_fraction * 100.0);
        if (!d.shares_with.empty()) {
            std::string others;
            for (const auto o : d.shares_with) {
                others += (others.empty() ? "" : ", ") + std::to_string(o);
            }
            text += " (with adapter" + std::string(d.shares_with.size() > 1 ? "s " : " ") + others +
                    " of the same device: " + format("%.0f%%", d.device_load_fraction * 100.0) +
                    ")";
        }
        if (!d.primary && d.capacity > 0.0) {
            text += " of " + format("%.0f%%", d.capacity * 100.0);
        }
        std::string names;
        for (const auto& t : d.tasks) {
            names += (names.empty() ? "" : ", ") + t;
        }
        text += " [" + names + "]";
        text += d.over_capacity ? " over capacity: update rates there will not all be met\n" : "\n";
    }
    for (const auto& t : plan.tasks) {
        text += to_text(t);
    }
    return text;
}

} // namespace tandem::detail
