// A fresh, empty folder for a test's files.
#pragma once

#include <filesystem>
#include <string>

#include <unistd.h>

namespace tandem::test {

// A fresh, empty folder under the system's temporary directory, named after the test and the
// process (parallel test processes do not share it).
inline std::filesystem::path temp_folder(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("tandem-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace tandem::test
