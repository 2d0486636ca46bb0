// Refusals of `tandem run` checked where no Vulkan driver is seen, so that any device work
// would fail with another message: the command exits 1 with "tandem: error: " and `message`
// on stderr, and writes nothing to its --out folder.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "run_command.hpp"
#include "temp_folder.hpp"

namespace tandem::test {

// `tandem run ARGUMENTS` (TANDEM_CLI_PATH) with no Vulkan driver.
inline CommandResult run_without_gpu(const std::string& arguments) {
    return run_command("VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json " +
                       std::string(TANDEM_CLI_PATH) + " run " + arguments);
}

inline void expect_refused(const std::string& arguments, const std::string& message) {
    const auto out = temp_folder("cli-run-refused") / "out";
    const CommandResult r = run_without_gpu(arguments + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 1) << arguments << "\n" << r.err;
    EXPECT_NE(r.err.find("tandem: error: "), std::string::npos) << arguments << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << arguments << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << arguments << ": nothing written";
}

} // namespace tandem::test
