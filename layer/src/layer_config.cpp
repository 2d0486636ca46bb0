#include "layer_config.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>

#include <unistd.h>

namespace tandem::layer_config {
namespace {

std::string_view trim(std::string_view text) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty() && blank(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && blank(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

std::size_t key_index(std::string_view key) {
    return static_cast<std::size_t>(std::find_if(std::begin(k_keys), std::end(k_keys),
                                                 [&](const char* known) { return key == known; }) -
                                    std::begin(k_keys));
}

std::string env_name(std::string_view key) {
    std::string name = "TANDEM_FRAMEGEN_";
    for (const char c : key) {
        name += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
    return name;
}

// A whole number from `min` to `max`, nothing else.
std::optional<long> whole_number(std::string_view text, long min, long max) {
    long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
        return std::nullopt;
    }
    return value;
}

// A render scale: a decimal number from 0.25 to 1, nothing else.
std::optional<double> render_scale(std::string_view text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || !(value >= 0.25) ||
        !(value <= 1.0)) {
        return std::nullopt;
    }
    return value;
}

// A selector that is an adapter index: match_adapters (src/core/discovery.cpp) reads digits
// alone, fewer than 8 of them, as one; 8 or more are a UUID prefix.
bool is_index(std::string_view selector) {
    return !selector.empty() && selector.size() < 8 &&
           std::all_of(selector.begin(), selector.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

// "~/x" with $HOME; the path as written otherwise.
std::string expand_home(std::string_view path, const EnvLookup& env) {
    const char* home = env("HOME");
    if (path.substr(0, 2) == "~/" && home != nullptr && *home != '\0') {
        return std::string(home) + std::string(path.substr(1));
    }
    return std::string(path);
}

// Sets `key` from `value` (trimmed, non-empty unless the key allows it). Returns what is wrong
// with it and what to write instead, or an empty string once set. `from_file`: a bare adapter
// index is refused (indices change between boots), and a path must be absolute.
std::string apply(FramegenConfig& config, std::string_view key, std::string_view value,
                  bool from_file, const EnvLookup& env) {
    if (key == "multiplier") {
        if (value != "1" && value != "2" && value != "3") {
            return "'" + std::string(value) +
                   "' is not 1, 2 or 3; write 1 (generation off), 2 or 3 presented frames "
                   "per real frame";
        }
        config.multiplier = value[0] - '0';
    } else if (key == "worker") {
        if (value.empty()) {
            return "it is empty; write auto, or a device selector as `tandem devices` lists them";
        }
        std::size_t start = 0;
        while (from_file && start <= value.size()) {
            const std::size_t comma = std::min(value.find(',', start), value.size());
            const std::string_view part = trim(value.substr(start, comma - start));
            if (is_index(part)) {
                return "'" + std::string(part) +
                       "' is a device index, which can change between boots; write a selector "
                       "that does not: pci:DDDD:BB:DD.F, VENDOR:DEVICE (10de:2330), a UUID prefix "
                       "or part of the name, as `tandem devices` lists them under Selectors";
            }
            start = comma + 1;
        }
        config.worker = std::string(value);
    } else if (key == "wait_ms") {
        const auto ms = whole_number(value, 0, 1000);
        if (!ms) {
            return "'" + std::string(value) +
                   "' is not a number of milliseconds from 0 to 1000; write a whole number from "
                   "0 (never wait) to 1000";
        }
        config.wait = std::chrono::milliseconds(*ms);
    } else if (key == "verify") {
        if (value != "0" && value != "1") {
            return "'" + std::string(value) + "' is not 0 or 1; write 1 (verify mode) or 0";
        }
        config.verify = value == "1";
    } else if (key == "dump_frames") {
        const auto frames = whole_number(value, 1, 10000);
        if (!frames) {
            return "'" + std::string(value) +
                   "' is not a number of frames from 1 to 10000; write a whole number from 1 to "
                   "10000";
        }
        config.dump_frames = static_cast<std::uint32_t>(*frames);
    } else if (key == "dump" || key == "report") {
        const std::string path = from_file ? expand_home(value, env) : std::string(value);
        if (from_file && !path.empty() && path.front() != '/') {
            return "'" + std::string(value) +
                   "' is a relative path, which would depend on the folder the program starts "
                   "in; write an absolute path (or one starting with ~/)";
        }
        (key == "dump" ? config.dump_folder : config.report_path) = path;
    } else if (key == "present_mode") {
        const auto mode = present_mode_from_name(value);
        if (!mode && !value.empty()) {
            return "'" + std::string(value) +
                   "' is not a present mode; write fifo, mailbox, immediate or fifo_relaxed (or "
                   "leave it out: the program's own)";
        }
        config.present_mode = mode;
    } else if (key == "copies") {
        if (value != "auto" && value != "compute" && value != "command") {
            return "'" + std::string(value) +
                   "' is not a way to copy frames; write auto (a compute dispatch on a GPU, the "
                   "copy command on a CPU device), compute or command";
        }
        config.copies = std::string(value);
    } else if (key == "queue") {
        if (value != "own" && value != "shared") {
            return "'" + std::string(value) +
                   "' is not a queue for Tandem; write shared (the program's own) or own (one of "
                   "its own where the program's device has one to spare)";
        }
        config.queue = std::string(value);
    } else if (key == "display") {
        if (value != "program" && value != "worker") {
            return "'" + std::string(value) +
                   "' is not where frames go out; write program (the program's device presents "
                   "them) or worker (the worker presents real and generated frames to the "
                   "program's window)";
        }
        config.display = std::string(value);
    } else if (key == "scale") {
        const auto scale = render_scale(value);
        if (!scale) {
            return "'" + std::string(value) +
                   "' is not a render scale from 0.25 to 1; write the fraction of the window's "
                   "width and height the program renders at (0.5: half; 1: scaling off)";
        }
        config.scale = *scale;
    }
    return {};
}

// The current value of `key`, as a sentence's end says it.
std::string current(const FramegenConfig& config, std::string_view key) {
    const Origin& origin = config.origin(key);
    if (origin.where == "default") {
        return "the default is used";
    }
    return "'" + origin.text + "' from " + origin.where + " is used";
}

struct Section {
    enum class Kind { Global, Program, Unknown } kind = Kind::Global;
    std::string program;
};

struct Line {
    std::string key;
    std::string value;
    std::string where; // "FILE:LINE"
};

} // namespace

const Origin& FramegenConfig::origin(std::string_view key) const {
    return origins.at(key_index(key));
}

ConfigLocation config_location(const EnvLookup& env) {
    const auto set = [&](const char* name) {
        const char* value = env(name);
        return value != nullptr && *value != '\0' ? std::string(value) : std::string();
    };
    if (const std::string named = set("TANDEM_FRAMEGEN_CONFIG"); !named.empty()) {
        return {named, "TANDEM_FRAMEGEN_CONFIG", true};
    }
    if (const std::string xdg = set("XDG_CONFIG_HOME"); !xdg.empty()) {
        return {xdg + "/tandem/framegen.conf", "XDG_CONFIG_HOME", false};
    }
    if (const std::string home = set("HOME"); !home.empty()) {
        return {home + "/.config/tandem/framegen.conf", "HOME", false};
    }
    return {};
}

ProgramNames current_program_names() {
    ProgramNames names;
    const auto basename = [](const std::string& path) {
        const std::size_t slash = path.rfind('/');
        return slash == std::string::npos ? path : path.substr(slash + 1);
    };
    std::string exe(4096, '\0');
    const ssize_t length = readlink("/proc/self/exe", exe.data(), exe.size());
    if (length > 0) {
        exe.resize(static_cast<std::size_t>(length));
        names.executable = basename(exe);
    }
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string argv0;
    if (std::getline(cmdline, argv0, '\0')) {
        names.argv0 = basename(argv0);
    }
    return names;
}

std::optional<std::string> read_config_file(const std::string& path, std::string& error) {
    error.clear();
    if (path.empty() || access(path.c_str(), F_OK) != 0) {
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
        error = path + " exists but cannot be read: no profile applies";
        return std::nullopt;
    }
    return text;
}

FramegenConfig resolve(const std::string& path, std::string_view text, const ProgramNames& program,
                       const EnvLookup& env) {
    FramegenConfig config;
    config.file = path;

    // Every line is checked, whichever section it is in, so that a mistake shows whatever
    // program runs; only the global section and the profile are applied.
    std::vector<std::pair<Section, Line>> lines;
    Section section;
    std::size_t number = 0;
    std::size_t start = 0;
    while (!path.empty() && start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = trim(text.substr(start, end - start));
        start = end + 1;
        ++number;
        const std::string where = path + ":" + std::to_string(number);
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        if (line.front() == '[') {
            const std::string_view inside =
                line.back() == ']' ? trim(line.substr(1, line.size() - 2)) : std::string_view();
            section = {};
            if (inside == "global") {
                continue;
            }
            if (inside.substr(0, 8) == "program " && !trim(inside.substr(8)).empty()) {
                section.kind = Section::Kind::Program;
                section.program = std::string(trim(inside.substr(8)));
                continue;
            }
            section.kind = Section::Kind::Unknown;
            config.problems.push_back(
                where + ": '" + std::string(line) +
                "' is not a section; write [global] or [program NAME] (NAME: the executable's "
                "file name). The lines up to the next section are ignored");
            continue;
        }
        const std::size_t equals = line.find('=');
        if (equals == std::string_view::npos) {
            config.problems.push_back(where + ": '" + std::string(line) +
                                      "' is not a setting; write KEY = VALUE. The line is ignored");
            continue;
        }
        const std::string key(trim(line.substr(0, equals)));
        const std::string value(trim(line.substr(equals + 1)));
        if (key_index(key) == std::size(k_keys)) {
            std::string known;
            for (const char* name : k_keys) {
                known += known.empty() ? name : std::string(", ") + name;
            }
            config.problems.push_back(where + ": '" + key + "' is not a setting; write one of " +
                                      known + ". The line is ignored");
            continue;
        }
        if (section.kind != Section::Kind::Unknown) {
            lines.push_back({section, Line{key, value, where}});
        }
    }

    // The profile: the executable's name, else argv[0]'s.
    const auto has_section = [&](const std::string& name) {
        return !name.empty() && std::any_of(lines.begin(), lines.end(), [&](const auto& entry) {
            return entry.first.kind == Section::Kind::Program && entry.first.program == name;
        });
    };
    if (has_section(program.executable)) {
        config.profile = program.executable;
        config.profile_matched_by = "executable";
    } else if (has_section(program.argv0)) {
        config.profile = program.argv0;
        config.profile_matched_by = "argv[0]";
    }

    // The global lines, then the profile's: a later line of a key wins. Other programs' lines
    // are checked, never applied.
    const auto take = [&](const Line& line, bool applied) {
        FramegenConfig scratch;
        const std::string wrong =
            apply(applied ? config : scratch, line.key, line.value, true, env);
        if (!wrong.empty()) {
            config.problems.push_back(line.where + ": " + line.key + " = " + line.value + ": " +
                                      wrong + ". The line is ignored");
        } else if (applied) {
            config.origins[key_index(line.key)] = {line.value, line.where};
        }
    };
    const auto in_profile = [&](const Section& in) {
        return in.kind == Section::Kind::Program && !config.profile.empty() &&
               in.program == config.profile;
    };
    for (const auto& [in, line] : lines) {
        if (!in_profile(in)) {
            take(line, in.kind == Section::Kind::Global);
        }
    }
    for (const auto& [in, line] : lines) {
        if (in_profile(in)) {
            take(line, true);
        }
    }

    // The environment over the file. An empty variable counts as unset.
    for (const char* key : k_keys) {
        const std::string name = env_name(key);
        const char* value = env(name.c_str());
        if (value == nullptr || *value == '\0') {
            continue;
        }
        const std::string wrong = apply(config, key, value, false, env);
        if (wrong.empty()) {
            config.origins[key_index(key)] = {value, name};
        } else if (std::string_view(key) == "multiplier") {
            // The layer's rule of old, which scripts rely on: a bad multiplier passes frames
            // through (the report says why) rather than falling back to another value.
            config.multiplier = std::nullopt;
            config.origins[key_index(key)] = {value, name};
            config.problems.push_back(name + "='" + value +
                                      "' is not 1, 2 or 3: frames pass through unchanged (give 1, "
                                      "2 or 3)");
        } else {
            config.problems.push_back(name + "='" + value + "': " + wrong +
                                      ". Ignored: " + current(config, key));
        }
    }

    if (config.verify && config.multiplier != 2) {
        config.problems.push_back("verify = 1 (from " + config.origin("verify").where +
                                  ") needs the multiplier 2: verify mode stays off");
        config.verify = false;
    }
    if (config.verify && config.scale < 1.0) {
        config.problems.push_back("verify = 1 (from " + config.origin("verify").where +
                                  ") compares frames of the program's own size, and scale = " +
                                  config.origin("scale").text +
                                  " upscales them: verify mode stays off");
        config.verify = false;
    }
    return config;
}

FramegenConfig load_for_current_process() {
    const EnvLookup env = [](const char* name) -> const char* { return std::getenv(name); };
    const ConfigLocation location = config_location(env);
    std::string error;
    const std::optional<std::string> text = read_config_file(location.path, error);
    FramegenConfig config =
        resolve(text ? location.path : std::string(), text ? *text : std::string_view(),
                current_program_names(), env);
    if (!error.empty()) {
        config.problems.insert(config.problems.begin(), error);
    } else if (!text && location.named) {
        config.problems.insert(config.problems.begin(),
                               "TANDEM_FRAMEGEN_CONFIG names " + location.path +
                                   ", which does not exist: no profile applies");
    }
    return config;
}

std::optional<VkPresentModeKHR> present_mode_from_name(std::string_view name) {
    if (name == "fifo") {
        return VK_PRESENT_MODE_FIFO_KHR;
    }
    if (name == "mailbox") {
        return VK_PRESENT_MODE_MAILBOX_KHR;
    }
    if (name == "immediate") {
        return VK_PRESENT_MODE_IMMEDIATE_KHR;
    }
    if (name == "fifo_relaxed") {
        return VK_PRESENT_MODE_FIFO_RELAXED_KHR;
    }
    return std::nullopt;
}

std::string present_mode_name(VkPresentModeKHR mode) {
    switch (mode) {
    case VK_PRESENT_MODE_FIFO_KHR:
        return "fifo";
    case VK_PRESENT_MODE_MAILBOX_KHR:
        return "mailbox";
    case VK_PRESENT_MODE_IMMEDIATE_KHR:
        return "immediate";
    case VK_PRESENT_MODE_FIFO_RELAXED_KHR:
        return "fifo_relaxed";
    default:
        return "";
    }
}

} // namespace tandem::layer_config
