// The frame-generation layer's settings from its configuration file and the environment, one
// piece of code for the layer (layer_settings.cpp) and `tandem layer status`, so that both read
// a value the same way (docs/layer.md, "Configuration file").
//
// The file: $TANDEM_FRAMEGEN_CONFIG, else $XDG_CONFIG_HOME/tandem/framegen.conf, else
// $HOME/.config/tandem/framegen.conf; an absent file is no profile. Lines are `key = value`, `#`
// or `;` comments, a global section (the lines before any section, or `[global]`) and
// `[program NAME]` sections. The sections for the executable's name (basename of
// /proc/self/exe) apply over the global one; where none is for it, those for argv[0]'s basename
// (a program started through a wrapper or a symbolic link). The environment
// (TANDEM_FRAMEGEN_<KEY>) overrides the file. A bad line is reported as FILE:LINE, ignored, and
// the rest is used.
//
// Everything but the few functions marked as reading the system is pure: text, program names
// and an environment lookup in, values and problems out. Any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

namespace tandem::layer_config {

// An environment variable's value, or nullptr when unset (std::getenv in the layer).
using EnvLookup = std::function<const char*(const char*)>;

// The keys, in the order they are listed.
inline constexpr const char* k_keys[] = {"multiplier", "worker",      "wait_ms", "verify",
                                         "dump",       "dump_frames", "report",  "present_mode",
                                         "scale",      "copies",      "display", "queue"};

// Where the configuration file is: the path, and which rule gave it. `named` when
// TANDEM_FRAMEGEN_CONFIG gave it (a missing file is then worth a message); empty path when
// neither XDG_CONFIG_HOME nor HOME is set.
struct ConfigLocation {
    std::string path;
    std::string rule; // "TANDEM_FRAMEGEN_CONFIG", "XDG_CONFIG_HOME", "HOME" or "" (none)
    bool named = false;
};
[[nodiscard]] ConfigLocation config_location(const EnvLookup& env);

// The executable's name (basename of /proc/self/exe) and argv[0]'s basename. Reads the system.
struct ProgramNames {
    std::string executable;
    std::string argv0;
};
[[nodiscard]] ProgramNames current_program_names();

// The file's text, or nullopt when it does not exist or cannot be read (`error` says which, and
// is empty for a file that does not exist). Reads the system.
[[nodiscard]] std::optional<std::string> read_config_file(const std::string& path,
                                                          std::string& error);

// One setting's value as the layer uses it, as written, and where it came from.
struct Origin {
    std::string text;              // as written; empty for the default
    std::string where = "default"; // "default", "FILE:LINE" or the environment variable's name
};

struct FramegenConfig {
    // 1 (generation off), 2 or 3; nullopt when TANDEM_FRAMEGEN_MULTIPLIER held anything else
    // (the layer then passes frames through; a bad value in the file is ignored instead).
    std::optional<int> multiplier = 2;
    std::string worker = "auto"; // a selector, or a comma-separated list; "auto"
    std::chrono::milliseconds wait{0};
    bool verify = false;
    std::string dump_folder; // empty: no dump
    std::uint32_t dump_frames = 16;
    std::string report_path; // empty: no report
    // Empty: the program's own.
    std::optional<VkPresentModeKHR> present_mode;
    // The program's render scale, 0.25..1 per axis: below 1 its swapchain is that much smaller
    // than its window and the worker upscales each frame to the window's size (docs/layer.md,
    // "Scaling"). 1: off.
    double scale = 1.0;
    // How the primary copies the program's frames into Tandem's input: "auto" (a compute
    // dispatch on a GPU, the copy command on a CPU device), "compute" or "command"
    // (RuntimeOptions::input_copies).
    std::string copies = "auto";
    // Where the frames go out: "program" (the program's device presents them, as without the
    // layer) or "worker" (the worker's device makes the real swapchain on the program's surface
    // and presents real and generated frames; docs/layer.md, "The display on the worker").
    std::string display = "program";
    // Which queue of the program's device Tandem submits to: "shared" (the program's, under the
    // layer's lock) or "own" (a queue of its own, added to the program's device where the family
    // the program presents on has one to spare; else the program's, shared).
    std::string queue = "shared";

    // Per key of k_keys, in that order.
    std::vector<Origin> origins = std::vector<Origin>(std::size(k_keys));
    [[nodiscard]] const Origin& origin(std::string_view key) const;

    std::string file;    // the file read, empty when none
    std::string profile; // the `[program NAME]` applied, empty when none
    // Which name chose it: "executable" or "argv[0]"; empty when none.
    std::string profile_matched_by;
    // Each bad line or value, one sentence saying where, what was wrong and what to write.
    std::vector<std::string> problems;
};

// The configuration from the file's text (empty `path`: no file) for a program of these names,
// with the environment over it. Pure.
[[nodiscard]] FramegenConfig resolve(const std::string& path, std::string_view text,
                                     const ProgramNames& program, const EnvLookup& env);

// The same, reading the file config_location() names and the process's own names and
// environment (std::getenv). Reads the system.
[[nodiscard]] FramegenConfig load_for_current_process();

// "fifo", "mailbox", "immediate", "fifo_relaxed" and back; nullopt / "" for anything else.
[[nodiscard]] std::optional<VkPresentModeKHR> present_mode_from_name(std::string_view name);
[[nodiscard]] std::string present_mode_name(VkPresentModeKHR mode);

} // namespace tandem::layer_config
