// Chrome trace-event JSON from a TraceLog: one "thread" track per device queue and per thread
// (named with thread_name metadata), complete ("X") events with microsecond timestamps. The
// format is the one Perfetto and chrome://tracing open. Pure function of the log; any thread.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/trace_log.hpp"

namespace tandem::detail {

[[nodiscard]] nlohmann::json chrome_trace_json(const TraceLog::Snapshot& log);

} // namespace tandem::detail
