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
    if (p->source == CostSource::Profile) {
        out["calibrated"] = p->task_calibrated ? "task" : "reference";
    }
    if (p->reference_ms) {
        out["reference_ms"] = *p->reference_ms;
    }
    return out;
}

// "0.035 measured", "0.035 profile" (from the reference workloads) or "0.035 task" (the profile
// measured this very task).
std::string prediction_text(const Prediction& p) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.3f %s", p.ms,
                  p.source == CostSource::Profile && p.task_calibrated ? "task"
                                                                       : to_string(p.source));
    return buffer;
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

json to_json(const DeviceEstimate& d) {
    json move = nullptr;
    if (d.move) {
        move = {{"prepare", prediction_json(d.move->prepare)},
                {"transfer", prediction_json(d.move->transfer)},
                {"path", to_string(d.move->path)},
                {"sync", prediction_json(d.move->sync)},
                {"sync_mode", d.move->gpu_side_sync ? "gpu" : "bridge"},
                {"reintegrate", prediction_json(d.move->reintegrate)},
                {"total_ms", d.move->total_ms()}};
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
                      {"over_capacity", d.over_capacity},
                      {"tasks", d.tasks}};
        entry["capacity"] = d.primary ? json(nullptr) : json(d.capacity);
        devices.push_back(entry);
    }
    return {{"decision", plan.decision},
            {"method", plan.method},
            {"predicted_primary_frame_ms", plan.predicted_primary_frame_ms},
            {"moves", plan.moves()},
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
    char line[256];
    std::snprintf(line, sizeof line, "  %-7s %-7s %-18s %-9s %-24s %-16s %-11s %-9s %-9s %s\n",
                  "adapter", "role", "execute", "prepare", "transfer", "sync", "reintegrate",
                  "move", "gain", "load");
    text += line;
    for (const auto& d : e.devices) {
        const std::string execute = d.execute ? prediction_text(*d.execute) : "-";
        if (d.primary) {
            std::snprintf(line, sizeof line, "  %-7u %-7s %-18s\n", d.device, "primary",
                          execute.c_str());
        } else if (!d.move) {
            std::snprintf(line, sizeof line, "  %-7u %-7s %-18s (%s)\n", d.device, "worker",
                          execute.c_str(), d.excluded.c_str());
        } else {
            const auto& m = *d.move;
            const auto transfer = format("%.3f ", m.transfer.ms) + to_string(m.path);
            const auto sync = format("%.3f ", m.sync.ms) + (m.gpu_side_sync ? "gpu" : "bridge");
            std::snprintf(line, sizeof line,
                          "  %-7u %-7s %-18s %-9.3f %-24s %-16s %-11.3f %-9.3f %-9.3f %.0f%%%s\n",
                          d.device, "worker", execute.c_str(), m.prepare.ms, transfer.c_str(),
                          sync.c_str(), m.reintegrate.ms, m.total_ms(), d.gain_ms,
                          d.load_fraction * 100.0,
                          d.candidate ? "" : (" (" + d.excluded + ")").c_str());
        }
        text += line;
    }
    text += "  (ms per update; margin " + format("%.3f ms", e.margin_ms) + ")\n";
    text += "  why: " + e.reason + "\n";
    return text;
}

std::string to_text(const PlacementPlan& plan) {
    std::string text = "placement decision " + std::to_string(plan.decision) + " (" + plan.method +
                       "): predicted primary frame " +
                       format("%.3f ms", plan.predicted_primary_frame_ms) + ", " +
                       std::to_string(plan.moves()) + " move(s)\n";
    for (const auto& d : plan.devices) {
        text += "  adapter " + std::to_string(d.device) + (d.primary ? " primary" : " worker");
        if (d.lost) {
            text += ": lost\n";
            continue;
        }
        text += ": load " + format("%.0f%%", d.load_fraction * 100.0);
        if (!d.primary) {
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
