// Trace export: the events a Runtime recorded (RuntimeOptions::trace = true) as Chrome
// trace-event JSON, one track per device queue and per thread, microsecond timestamps. Open the
// file in https://ui.perfetto.dev or chrome://tracing.
//
// clang-format off
//     tandem::RuntimeOptions options;
//     options.trace = true;
//     tandem::Runtime runtime(options);
//     ... run tasks ...
//     tandem::write_trace(runtime, "tandem-trace.json");
// clang-format on
#pragma once

#include <string>

#include "tandem/export.hpp"
#include "tandem/runtime.hpp"

namespace tandem {

// Throws tandem::Error when the file cannot be written.
TANDEM_API void write_trace(const Runtime& runtime, const std::string& path);

} // namespace tandem
