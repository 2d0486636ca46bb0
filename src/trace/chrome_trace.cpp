#include "trace/chrome_trace.hpp"

#include <fstream>

#include "runtime/runtime_impl.hpp"
#include "tandem/error.hpp"
#include "tandem/trace.hpp"

namespace tandem::detail {

nlohmann::json chrome_trace_json(const TraceLog::Snapshot& log) {
    nlohmann::json events = nlohmann::json::array();
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", 0},
                      {"args", {{"name", "tandem"}}}});
    for (std::size_t i = 0; i < log.tracks.size(); ++i) {
        events.push_back({{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", i + 1},
                          {"args", {{"name", log.tracks[i]}}}});
        events.push_back({{"name", "thread_sort_index"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", i + 1},
                          {"args", {{"sort_index", i}}}});
    }
    for (const auto& s : log.spans) {
        nlohmann::json e = {{"name", s.name},
                            {"cat", "tandem"},
                            {"ph", "X"},
                            {"pid", 1},
                            {"tid", s.track + 1},
                            {"ts", s.begin_us},
                            {"dur", std::max<std::int64_t>(s.end_us - s.begin_us, 1)}};
        if (s.generation != 0 || !s.task.empty()) {
            e["args"] = {{"generation", s.generation}, {"task", s.task}};
        }
        events.push_back(std::move(e));
    }
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ms"},
            {"otherData", {{"dropped_events", log.dropped}}}};
}

} // namespace tandem::detail

namespace tandem {

void write_trace(const Runtime& runtime, const std::string& path) {
    const auto& log = detail::RuntimeAccess::impl(runtime).trace();
    if (!log.enabled()) {
        throw Error("This runtime did not record a trace",
                    "Create it with RuntimeOptions::trace = true");
    }
    std::ofstream out(path);
    if (!out) {
        throw Error("Cannot write trace file '" + path + "'",
                    "Check that the folder exists and is writable");
    }
    out << detail::chrome_trace_json(log.snapshot()).dump() << '\n';
    if (!out) {
        throw Error("Writing trace file '" + path + "' failed", "Check free disk space");
    }
}

} // namespace tandem
