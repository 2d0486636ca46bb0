// Where nlohmann::json refused a document, for loaders of untrusted input (tasks file,
// calibration profile) that report such input as a normal refusal naming the place. Any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tandem::detail {

struct JsonRefusal {
    std::size_t byte = 0; // where the parser stopped
    std::string token;    // the token it refused (e.g. "1e999")
    std::string pointer;  // JSON pointer of the value being read ("/" for the root)
};

// Parses `text` again, keeping only the path, and says where it fails (call it once a parse
// has thrown). A document that parses gives the end of the text and "/".
[[nodiscard]] JsonRefusal locate_json_refusal(std::string_view text);

} // namespace tandem::detail
