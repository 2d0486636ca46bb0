// Runs a command line through /bin/sh and captures its stdout, stderr and exit code.
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tandem::test {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline CommandResult run_command(const std::string& command) {
    static int counter = 0;
    const std::string err_path =
        "/tmp/tandem-test-stderr-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    CommandResult result;
    FILE* pipe = ::popen((command + " 2>" + err_path).c_str(), "r");
    if (pipe == nullptr) {
        return result;
    }
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
        result.out.append(buffer.data(), n);
    }
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(err_path);
    std::stringstream ss;
    ss << err.rdbuf();
    result.err = ss.str();
    std::remove(err_path.c_str());
    return result;
}

} // namespace tandem::test
