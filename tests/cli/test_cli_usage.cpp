// Bad usage of `tandem` exits 2 with a sentence on stderr, before any device is opened (the
// commands see no Vulkan driver at all): an unknown command is named as one, and every unsigned
// or seconds option of every command refuses a negative number, a non-number and a number out
// of its range, naming the option and what it allows (never a negative read as a huge number).
// `tandem --version` prints the library's version, also without a GPU.
#include <cctype>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <unistd.h>

#include "run_command.hpp"
#include "tandem/version.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;

CommandResult run_without_gpu(const std::string& arguments) {
    return run_command("VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json " +
                       k_tandem + " " + arguments);
}

void expect_bad_usage(const std::string& arguments, const std::vector<std::string>& fragments) {
    const CommandResult r = run_without_gpu(arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments << "\n" << r.err;
    EXPECT_NE(r.err.find("tandem: error: "), std::string::npos) << arguments << "\n" << r.err;
    for (const std::string& fragment : fragments) {
        EXPECT_NE(r.err.find(fragment), std::string::npos)
            << arguments << ": no '" << fragment << "' in\n"
            << r.err;
    }
    EXPECT_TRUE(r.out.empty()) << arguments << "\n" << r.out;
}

TEST(CliUsage, AnUnknownCommandIsNamed) {
    expect_bad_usage("frobnicate", {"unknown command 'frobnicate'", "devices", "run"});
    expect_bad_usage("--primary 0 frobnicate", {"unknown command 'frobnicate'"});
    expect_bad_usage("", {"no command given", "run"});
}

TEST(CliUsage, HelpDocumentsTheExitStatuses) {
    const CommandResult r = run_without_gpu("--help");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2 bad usage: an unknown command or option"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("3 Vulkan validation messages"), std::string::npos) << r.out;
}

TEST(CliUsage, VersionPrintsTheLibrarysVersion) {
    const std::string expected = "tandem " + std::to_string(TANDEM_VERSION_MAJOR) + "." +
                                 std::to_string(TANDEM_VERSION_MINOR) + "." +
                                 std::to_string(TANDEM_VERSION_PATCH) + "\n";
    EXPECT_EQ(expected, std::string("tandem ") + version() + "\n");
    const CommandResult r = run_without_gpu("--version");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, expected);
    EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliUsage, UnknownOptionsAndMissingValuesAreBadUsage) {
    expect_bad_usage("run --frobnicate", {"--frobnicate", "tandem run --help"});
    expect_bad_usage("run extra", {"extra"});
    expect_bad_usage("run --frames", {"--frames", "missing"});
    expect_bad_usage("probe --jobs", {"--jobs", "missing"});
}

struct Refusal {
    std::string command;
    std::string option;
    std::string value;
    std::string why; // negative, not a whole number, out of range, not a number
    std::string allowed;
    bool global = false; // an option of every command, given before it
};

void PrintTo(const Refusal& r, std::ostream* os) {
    *os << (r.global ? r.option + " " + r.value + " " + r.command
                     : r.command + " " + r.option + " " + r.value);
}

class CliUsageNumbers : public ::testing::TestWithParam<Refusal> {};

TEST_P(CliUsageNumbers, AreRefusedNamingTheOptionAndWhatItAllows) {
    const Refusal& p = GetParam();
    const auto out = std::filesystem::temp_directory_path() /
                     ("tandem-test-cli-usage-" + std::to_string(::getpid()));
    std::filesystem::remove_all(out);
    const std::string option = p.option + " " + p.value;
    std::string arguments = p.global ? option + " " + p.command : p.command + " " + option;
    if (p.command == "run") {
        arguments += " --out " + out.string();
    }
    expect_bad_usage(arguments, {p.option + ": '" + p.value + "' " + p.why, "; give " + p.allowed});
    EXPECT_FALSE(std::filesystem::exists(out)) << arguments << ": nothing written";
}

const std::string k_frames = "a whole number from 1 to 1000000";
const std::string k_timeout = "a whole number from 1 to 3600000";
const std::string k_crowd = "a whole number from 0 to 4000";
const std::string k_slots = "a whole number from 2 to 16";

INSTANTIATE_TEST_SUITE_P(
    EveryCommand, CliUsageNumbers,
    ::testing::Values(
        Refusal{"run", "--frames", "-5", "is negative", k_frames},
        Refusal{"run", "--frames", "abc", "is not a whole number", k_frames},
        Refusal{"run", "--frames", "2.5", "is not a whole number", k_frames},
        Refusal{"run", "--frames", "+5", "is not a whole number", k_frames},
        Refusal{"run", "--frames", "0", "is out of range", k_frames},
        Refusal{"run", "--frames", "18446744073709551616", "is out of range", k_frames},
        Refusal{"run", "--png-every", "-1", "is negative", "a whole number from 0 to 1000000"},
        Refusal{"run", "--slots", "-3", "is negative", k_slots},
        Refusal{"run", "--slots", "1", "is out of range", k_slots},
        Refusal{"run", "--timeout-ms", "-1", "is negative", k_timeout},
        Refusal{"run", "--demo-crowd", "-1", "is negative", k_crowd},
        Refusal{"run", "--demo-crowd", "4001", "is out of range", k_crowd},
        Refusal{"stream", "--limit", "-1", "is negative", "a whole number from 0 to"},
        Refusal{"stream", "--slots", "x", "is not a whole number", k_slots},
        Refusal{"stream", "--verify-every", "-30", "is negative", "a whole number from 0 to"},
        Refusal{"stream", "--timeout-ms", "0", "is out of range", k_timeout},
        Refusal{"stream", "--duration", "-1", "is negative",
                "a number of seconds above 0, at most 86400"},
        Refusal{"stream", "--duration", "nan", "is not a number", "a number of seconds above 0"},
        Refusal{"probe", "--jobs", "-1", "is negative", "a whole number from 1 to 1000000"},
        Refusal{"probe", "--in-flight", "abc", "is not a whole number",
                "a whole number from 1 to 64"},
        Refusal{"probe", "--in-flight", "65", "is out of range", "a whole number from 1 to 64"},
        Refusal{"probe", "--timeout", "-1", "is negative",
                "a number of seconds above 0, at most 3600"},
        Refusal{"calibrate", "--demo-crowd", "-1", "is negative", k_crowd},
        Refusal{"calibrate", "--timeout-ms", "abc", "is not a whole number", k_timeout},
        Refusal{"devices", "--virtual-devices", "-2", "is negative", "a whole number from 1 to 16",
                true},
        Refusal{"probe", "--virtual-devices", "two", "is not a whole number",
                "a whole number from 1 to 16", true}),
    [](const ::testing::TestParamInfo<Refusal>& param) {
        std::string name = param.param.command + "_" + std::to_string(param.index);
        for (char c : param.param.option) {
            if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
                name += c;
            }
        }
        return name;
    });

} // namespace
} // namespace tandem::test
