// The layer's configuration file and environment (layer/src/layer_config.hpp), read by pure
// functions: sections, which profile applies, the environment over the file, and bad lines named
// by FILE:LINE, ignored while the rest is used.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layer_config.hpp"

namespace {

using tandem::layer_config::ConfigLocation;
using tandem::layer_config::EnvLookup;
using tandem::layer_config::FramegenConfig;
using tandem::layer_config::ProgramNames;

EnvLookup env_of(const std::map<std::string, std::string>& values) {
    return [values](const char* name) -> const char* {
        const auto found = values.find(name);
        return found != values.end() ? found->second.c_str() : nullptr;
    };
}

FramegenConfig resolve(std::string_view text, ProgramNames program = {"vkcube", "vkcube"},
                       const std::map<std::string, std::string>& env = {}) {
    return tandem::layer_config::resolve("/cfg/framegen.conf", text, program, env_of(env));
}

constexpr const char* k_file = R"(# the global section
multiplier = 2
wait_ms = 5
present_mode = mailbox

[program vkcube]
multiplier = 3
report = /tmp/vkcube.json
worker = pci:0000:3b:00.0

[program game.exe]
; a comment
multiplier = 1
worker = 10de:2330
)";

TEST(LayerConfig, FileLocation) {
    const ConfigLocation named = tandem::layer_config::config_location(
        env_of({{"TANDEM_FRAMEGEN_CONFIG", "/a.conf"}, {"XDG_CONFIG_HOME", "/x"}}));
    EXPECT_EQ(named.path, "/a.conf");
    EXPECT_TRUE(named.named);
    const ConfigLocation xdg = tandem::layer_config::config_location(
        env_of({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/home/u"}}));
    EXPECT_EQ(xdg.path, "/x/tandem/framegen.conf");
    EXPECT_EQ(xdg.rule, "XDG_CONFIG_HOME");
    EXPECT_FALSE(xdg.named);
    const ConfigLocation home =
        tandem::layer_config::config_location(env_of({{"XDG_CONFIG_HOME", ""}, {"HOME", "/h"}}));
    EXPECT_EQ(home.path, "/h/.config/tandem/framegen.conf");
    EXPECT_EQ(tandem::layer_config::config_location(env_of({})).path, "");
}

TEST(LayerConfig, DefaultsWithoutFile) {
    const FramegenConfig config =
        tandem::layer_config::resolve("", "", {"vkcube", "vkcube"}, env_of({}));
    EXPECT_EQ(config.multiplier, 2);
    EXPECT_EQ(config.worker, "auto");
    EXPECT_EQ(config.wait.count(), 0);
    EXPECT_FALSE(config.verify);
    EXPECT_EQ(config.dump_frames, 16u);
    EXPECT_EQ(config.report_path, "");
    EXPECT_FALSE(config.present_mode.has_value());
    EXPECT_EQ(config.profile, "");
    EXPECT_EQ(config.origin("multiplier").where, "default");
    EXPECT_TRUE(config.problems.empty());
}

TEST(LayerConfig, ProfileOverGlobalSection) {
    const FramegenConfig config = resolve(k_file);
    EXPECT_TRUE(config.problems.empty()) << config.problems.front();
    EXPECT_EQ(config.profile, "vkcube");
    EXPECT_EQ(config.profile_matched_by, "executable");
    EXPECT_EQ(config.multiplier, 3);
    EXPECT_EQ(config.origin("multiplier").where, "/cfg/framegen.conf:7");
    EXPECT_EQ(config.origin("multiplier").text, "3");
    EXPECT_EQ(config.wait.count(), 5); // from the global section
    EXPECT_EQ(config.origin("wait_ms").where, "/cfg/framegen.conf:3");
    EXPECT_EQ(config.present_mode, VK_PRESENT_MODE_MAILBOX_KHR);
    EXPECT_EQ(config.report_path, "/tmp/vkcube.json");
    EXPECT_EQ(config.worker, "pci:0000:3b:00.0");
    EXPECT_EQ(config.origin("verify").where, "default");
}

TEST(LayerConfig, ProgramMatchedByArgv0WhenTheExecutableHasNoProfile) {
    // Wine runs game.exe as wine64-preloader; argv[0] names the game.
    const FramegenConfig config = resolve(k_file, {"wine64-preloader", "game.exe"});
    EXPECT_EQ(config.profile, "game.exe");
    EXPECT_EQ(config.profile_matched_by, "argv[0]");
    EXPECT_EQ(config.multiplier, 1);
    EXPECT_EQ(config.worker, "10de:2330");
    // The executable's own profile wins over argv[0]'s.
    const FramegenConfig both = resolve(k_file, {"vkcube", "game.exe"});
    EXPECT_EQ(both.profile, "vkcube");
    // No profile: the global section alone.
    const FramegenConfig none = resolve(k_file, {"vkcubepp", "vkcubepp"});
    EXPECT_EQ(none.profile, "");
    EXPECT_EQ(none.multiplier, 2);
    EXPECT_EQ(none.worker, "auto");
    EXPECT_EQ(none.report_path, "");
}

TEST(LayerConfig, GlobalSectionByName) {
    const FramegenConfig config =
        resolve("[program vkcube]\nwait_ms = 7\n[global]\nwait_ms = 9\nverify = 1\n");
    EXPECT_EQ(config.wait.count(), 7); // the profile over [global], whatever the order
    EXPECT_TRUE(config.verify);
    EXPECT_EQ(config.origin("verify").where, "/cfg/framegen.conf:5");
}

TEST(LayerConfig, EnvironmentOverridesTheFile) {
    const FramegenConfig config = resolve(k_file, {"vkcube", "vkcube"},
                                          {{"TANDEM_FRAMEGEN_MULTIPLIER", "2"},
                                           {"TANDEM_FRAMEGEN_WORKER", "1"},
                                           {"TANDEM_FRAMEGEN_WAIT_MS", ""},
                                           {"TANDEM_FRAMEGEN_PRESENT_MODE", "fifo"}});
    EXPECT_TRUE(config.problems.empty());
    EXPECT_EQ(config.multiplier, 2);
    EXPECT_EQ(config.origin("multiplier").where, "TANDEM_FRAMEGEN_MULTIPLIER");
    // An index is fine in the environment, set for one run on this boot.
    EXPECT_EQ(config.worker, "1");
    // An empty variable counts as unset: the file's value stays.
    EXPECT_EQ(config.wait.count(), 5);
    EXPECT_EQ(config.present_mode, VK_PRESENT_MODE_FIFO_KHR);
}

TEST(LayerConfig, BadEnvironmentValues) {
    const FramegenConfig config = resolve(k_file, {"vkcube", "vkcube"},
                                          {{"TANDEM_FRAMEGEN_MULTIPLIER", "seven"},
                                           {"TANDEM_FRAMEGEN_WAIT_MS", "-1"},
                                           {"TANDEM_FRAMEGEN_VERIFY", "yes"}});
    // A bad multiplier passes frames through, as before the file existed.
    EXPECT_FALSE(config.multiplier.has_value());
    EXPECT_EQ(config.origin("multiplier").text, "seven");
    ASSERT_EQ(config.problems.size(), 3u);
    EXPECT_EQ(config.problems[0], "TANDEM_FRAMEGEN_MULTIPLIER='seven' is not 1, 2 or 3: frames "
                                  "pass through unchanged (give 1, 2 or 3)");
    EXPECT_EQ(config.problems[1],
              "TANDEM_FRAMEGEN_WAIT_MS='-1': '-1' is not a number of milliseconds from 0 to "
              "1000; write a whole number from 0 (never wait) to 1000. Ignored: '5' from "
              "/cfg/framegen.conf:3 is used");
    EXPECT_EQ(config.wait.count(), 5);
    EXPECT_EQ(config.problems[2].rfind("TANDEM_FRAMEGEN_VERIFY='yes': 'yes' is not 0 or 1", 0), 0u)
        << config.problems[2];
}

TEST(LayerConfig, BadLinesAreNamedAndIgnored) {
    const FramegenConfig config = resolve("multiplier = 4\n"
                                          "wait_ms = 20\n"
                                          "speed = fast\n"
                                          "just words\n"
                                          "[program vkcube]\n"
                                          "present_mode = vsync\n"
                                          "dump_frames = 0\n"
                                          "report = out.json\n"
                                          "dump = ~/frames\n",
                                          {"vkcube", "vkcube"}, {{"HOME", "/home/u"}});
    ASSERT_EQ(config.problems.size(), 6u);
    EXPECT_EQ(config.problems[0], "/cfg/framegen.conf:3: 'speed' is not a setting; write one of "
                                  "multiplier, worker, wait_ms, verify, dump, dump_frames, "
                                  "report, present_mode, scale, copies, display, queue. The "
                                  "line is ignored");
    EXPECT_EQ(config.problems[1],
              "/cfg/framegen.conf:4: 'just words' is not a setting; write KEY = VALUE. The line "
              "is ignored");
    EXPECT_EQ(config.problems[2], "/cfg/framegen.conf:1: multiplier = 4: '4' is not 1, 2 or 3; "
                                  "write 1 (generation off), 2 or 3 presented frames per real "
                                  "frame. The line is ignored");
    EXPECT_EQ(config.problems[3],
              "/cfg/framegen.conf:6: present_mode = vsync: 'vsync' is not a present mode; write "
              "fifo, mailbox, immediate or fifo_relaxed (or leave it out: the program's own). "
              "The line is ignored");
    EXPECT_NE(config.problems[4].find("/cfg/framegen.conf:7: dump_frames = 0: '0' is not a number "
                                      "of frames from 1 to 10000"),
              std::string::npos);
    EXPECT_NE(config.problems[5].find("/cfg/framegen.conf:8: report = out.json: 'out.json' is a "
                                      "relative path"),
              std::string::npos);
    // Everything else is used.
    EXPECT_EQ(config.multiplier, 2);
    EXPECT_EQ(config.origin("multiplier").where, "default");
    EXPECT_EQ(config.wait.count(), 20);
    EXPECT_FALSE(config.present_mode.has_value());
    EXPECT_EQ(config.dump_frames, 16u);
    EXPECT_EQ(config.report_path, "");
    EXPECT_EQ(config.dump_folder, "/home/u/frames");
}

TEST(LayerConfig, BareIndexRefusedInTheFile) {
    const FramegenConfig config =
        resolve("worker = 1\n[program vkcube]\nworker = llvmpipe, 0\n[program other]\nworker = "
                "2\n");
    ASSERT_EQ(config.problems.size(), 3u);
    EXPECT_EQ(config.problems[0],
              "/cfg/framegen.conf:1: worker = 1: '1' is a device index, which can change between "
              "boots; write a selector that does not: pci:DDDD:BB:DD.F, VENDOR:DEVICE "
              "(10de:2330), a UUID prefix or part of the name, as `tandem devices` lists them "
              "under Selectors. The line is ignored");
    // Another program's profile is checked too, though not applied.
    EXPECT_EQ(
        config.problems[1].rfind("/cfg/framegen.conf:5: worker = 2: '2' is a device index", 0), 0u);
    EXPECT_EQ(config.problems[2].rfind("/cfg/framegen.conf:3: worker = llvmpipe, 0: '0' is a "
                                       "device index",
                                       0),
              0u);
    EXPECT_EQ(config.worker, "auto");
    // Eight digits or more are a UUID prefix, not an index.
    EXPECT_TRUE(resolve("worker = 12345678\n").problems.empty());
}

TEST(LayerConfig, UnknownSectionIsIgnoredWhole) {
    const FramegenConfig config = resolve("[programs vkcube]\nmultiplier = 3\n[program vkcube]\n"
                                          "wait_ms = 1\n");
    ASSERT_EQ(config.problems.size(), 1u);
    EXPECT_EQ(config.problems[0],
              "/cfg/framegen.conf:1: '[programs vkcube]' is not a section; write [global] or "
              "[program NAME] (NAME: the executable's file name). The lines up to the next "
              "section are ignored");
    EXPECT_EQ(config.multiplier, 2);
    EXPECT_EQ(config.wait.count(), 1);
}

TEST(LayerConfig, VerifyNeedsMultiplierTwo) {
    const FramegenConfig config = resolve("[program vkcube]\nverify = 1\nmultiplier = 3\n");
    ASSERT_EQ(config.problems.size(), 1u);
    EXPECT_EQ(config.problems[0], "verify = 1 (from /cfg/framegen.conf:2) needs the multiplier 2: "
                                  "verify mode stays off");
    EXPECT_FALSE(config.verify);
}

TEST(LayerConfig, PresentModeNames) {
    for (const char* name : {"fifo", "mailbox", "immediate", "fifo_relaxed"}) {
        const auto mode = tandem::layer_config::present_mode_from_name(name);
        ASSERT_TRUE(mode.has_value()) << name;
        EXPECT_EQ(tandem::layer_config::present_mode_name(*mode), name);
    }
    EXPECT_FALSE(tandem::layer_config::present_mode_from_name("vsync").has_value());
}

} // namespace

TEST(LayerConfig, RenderScaleFromTheFileAndTheEnvironment) {
    FramegenConfig config = resolve("scale = 0.5\n[program vkcube]\nscale = 0.75\n");
    EXPECT_TRUE(config.problems.empty());
    EXPECT_DOUBLE_EQ(config.scale, 0.75);
    EXPECT_EQ(config.origin("scale").where, "/cfg/framegen.conf:3");
    config = resolve("scale = 0.5\n", {"vkcube", "vkcube"}, {{"TANDEM_FRAMEGEN_SCALE", "1"}});
    EXPECT_DOUBLE_EQ(config.scale, 1.0); // 1: off
    for (const char* bad : {"0.2", "1.5", "half", "50%", "0.5x"}) {
        config = resolve("", {"vkcube", "vkcube"}, {{"TANDEM_FRAMEGEN_SCALE", bad}});
        EXPECT_DOUBLE_EQ(config.scale, 1.0) << bad;
        ASSERT_EQ(config.problems.size(), 1u) << bad;
        EXPECT_NE(config.problems[0].find("is not a render scale from 0.25 to 1"),
                  std::string::npos)
            << config.problems[0];
    }
    // Verify mode compares frames of the program's size: not with scaling.
    config = resolve("", {"vkcube", "vkcube"},
                     {{"TANDEM_FRAMEGEN_SCALE", "0.5"}, {"TANDEM_FRAMEGEN_VERIFY", "1"}});
    EXPECT_FALSE(config.verify);
    ASSERT_EQ(config.problems.size(), 1u);
    EXPECT_NE(config.problems[0].find("verify mode stays off"), std::string::npos);
}

// A setting of a few named values, read as the layer reads each of them: the program's profile
// over the file's first line, the environment over the file, `fallback` by default and for a bad
// value, which is named with one problem containing `hint`.
struct NamedChoice {
    const char* key;
    std::string FramegenConfig::*field;
    const char* variable;
    const char* in_file;
    const char* in_profile;
    const char* in_environment; // over in_profile written alone in the file
    const char* fallback;
    std::vector<const char*> bad;
    const char* hint;
};

void expect_named_choice(const NamedChoice& c) {
    const std::string key = c.key;
    FramegenConfig config = resolve(key + " = " + c.in_file + "\n[program vkcube]\n" + key + " = " +
                                    c.in_profile + "\n");
    EXPECT_TRUE(config.problems.empty());
    EXPECT_EQ(config.*c.field, c.in_profile);
    EXPECT_EQ(config.origin(key).where, "/cfg/framegen.conf:3");
    config = resolve(key + " = " + c.in_profile + "\n", {"vkcube", "vkcube"},
                     {{c.variable, c.in_environment}});
    EXPECT_EQ(config.*c.field, c.in_environment);
    EXPECT_EQ(config.origin(key).where, c.variable);
    EXPECT_EQ(resolve("").*c.field, c.fallback);
    for (const char* bad : c.bad) {
        config = resolve("", {"vkcube", "vkcube"}, {{c.variable, bad}});
        EXPECT_EQ(config.*c.field, c.fallback) << bad;
        ASSERT_EQ(config.problems.size(), 1u) << bad;
        EXPECT_NE(config.problems[0].find(c.hint), std::string::npos) << config.problems[0];
    }
}

TEST(LayerConfig, DisplayFromTheFileAndTheEnvironment) {
    expect_named_choice({"display",
                         &FramegenConfig::display,
                         "TANDEM_FRAMEGEN_DISPLAY",
                         "program",
                         "worker",
                         "program",
                         "program",
                         {"gpu", "Worker", "1"},
                         "write program"});
}

TEST(LayerConfig, QueueFromTheFileAndTheEnvironment) {
    expect_named_choice({"queue",
                         &FramegenConfig::queue,
                         "TANDEM_FRAMEGEN_QUEUE",
                         "shared",
                         "own",
                         "shared",
                         "shared",
                         {"auto", "Own", "1"},
                         "write shared"});
}

TEST(LayerConfig, CopiesFromTheFileAndTheEnvironment) {
    expect_named_choice({"copies",
                         &FramegenConfig::copies,
                         "TANDEM_FRAMEGEN_COPIES",
                         "command",
                         "compute",
                         "auto",
                         "auto",
                         {"shader", "Compute", "copy"},
                         "write auto"});
}
