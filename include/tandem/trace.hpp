// Trace export: the events a Runtime recorded (RuntimeOptions::trace = true) as Chrome
// trace-event JSON, one track per device queue and per thread, microsecond timestamps. Where a
// device pair hands transfers on through a host thread, its track ("worker1->primary bridge")
// marks each band it handed on: the moment the sender's copy of it was seen finished and the
// receiver's was submitted. Open the file in https://ui.perfetto.dev or chrome://tracing.
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
