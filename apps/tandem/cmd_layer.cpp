// `tandem layer`: the Vulkan layer VK_LAYER_TANDEM_frame_generation (layer/, docs/layer.md) seen
// from the command line. `status` says whether the Vulkan loader would find and enable the layer,
// with which settings (configuration file and environment) and which worker device it would
// pick; `run -- PROGRAM [ARGS]` enables it for one program and execs it (a Steam launch option:
// `tandem layer run -- %command%`). Neither opens a device (`status` lists them on an instance).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

// The layer's own reading of its configuration file and environment (layer/src/layer_config.hpp,
// the library tandem_layer_config), so that the status reads each value as the layer does. Not
// part of libtandem: it includes only the standard library and the Vulkan headers, which
// layout.client_includes checks.
#include <layer_config.hpp>

#include "commands.hpp"
#include "harness/device_session.hpp"
#include "tandem/error.hpp"

namespace tandem::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_layer_name = "VK_LAYER_TANDEM_frame_generation";
constexpr const char* k_manifest_file = "VkLayer_tandem_frame_generation.json";

struct LayerArgs {
    bool json = false;
    std::string status_program; // --program: whose profile the status shows; empty: none
    std::string multiplier;
    std::string report;
    std::string worker;
    std::string present_mode;
    std::string verify;
    std::string dump;
    std::string scale;
    std::string copies;
    std::string queue;
    std::string display;
    bool log = false;
    std::vector<std::string> program;
    // Whether LP_NUM_THREADS was unset when `tandem` started: main sets it for Tandem's own
    // devices before a command runs, and a program run under the layer must not inherit that.
    bool lp_num_threads_unset = std::getenv("LP_NUM_THREADS") == nullptr;
};

std::string env_or(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : fallback;
}

std::vector<std::string> split_paths(const std::string& list) {
    std::vector<std::string> paths;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t end = std::min(list.find(':', start), list.size());
        if (end > start) {
            paths.push_back(list.substr(start, end - start));
        }
        start = end + 1;
    }
    return paths;
}

// One folder the loader reads manifests from, and what it holds of the layer.
struct ManifestPlace {
    fs::path folder;
    std::string kind; // "implicit" (found by the loader, enabled by ENABLE_TANDEM_FRAMEGEN=1) or
                      // "explicit" (the build folder's: enabled by VK_INSTANCE_LAYERS)
    bool manifest_found = false;
    bool library_found = false;
    fs::path library;
    std::string problem; // why a manifest there is unusable, else empty
};

// Reads the manifest in place.folder, if any, and whether the library it names exists (a path
// with a '/' is relative to the manifest; a bare name is left to the dynamic linker's search).
void inspect(ManifestPlace& place) {
    const fs::path manifest = place.folder / k_manifest_file;
    std::error_code error;
    if (!fs::is_regular_file(manifest, error)) {
        return;
    }
    place.manifest_found = true;
    try {
        std::ifstream in(manifest);
        const nlohmann::json json = nlohmann::json::parse(in);
        const auto& layer = json.at("layer");
        if (layer.at("name").get<std::string>() != k_layer_name) {
            place.problem = "the manifest names another layer";
            return;
        }
        const std::string library = layer.at("library_path").get<std::string>();
        if (library.find('/') == std::string::npos) {
            place.library = library;
            place.library_found = true; // found by the dynamic linker at load time, if installed
            return;
        }
        place.library =
            fs::path(library).is_absolute() ? fs::path(library) : place.folder / fs::path(library);
        place.library = place.library.lexically_normal();
        place.library_found = fs::is_regular_file(place.library, error);
        if (!place.library_found) {
            place.problem = "the library it names is missing";
        }
    } catch (const std::exception& e) {
        place.problem = std::string("unreadable manifest: ") + e.what();
    }
}

// The implicit-layer folders the Vulkan loader reads on Linux, in its order.
std::vector<fs::path> implicit_folders() {
    const std::string home = env_or("HOME", "");
    std::vector<fs::path> folders;
    const auto add = [&](const std::string& base) {
        if (!base.empty()) {
            folders.push_back(fs::path(base) / "vulkan/implicit_layer.d");
        }
    };
    add(env_or("XDG_CONFIG_HOME", home.empty() ? "" : home + "/.config"));
    for (const std::string& dir : split_paths(env_or("XDG_CONFIG_DIRS", "/etc/xdg"))) {
        add(dir);
    }
    add("/etc");
    add(env_or("XDG_DATA_HOME", home.empty() ? "" : home + "/.local/share"));
    for (const std::string& dir :
         split_paths(env_or("XDG_DATA_DIRS", "/usr/local/share:/usr/share"))) {
        add(dir);
    }
    return folders;
}

// The build folder's explicit manifest: `tandem` in <build>/apps/tandem, the layer in
// <build>/layer. Empty when this `tandem` is not a build's.
std::optional<fs::path> build_folder_layer() {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (error) {
        return std::nullopt;
    }
    const fs::path folder = (self.parent_path() / "../../layer").lexically_normal();
    if (!fs::is_regular_file(folder / k_manifest_file, error)) {
        return std::nullopt;
    }
    return folder;
}

// One adapter as the status lists it, with the selectors that stay across boots.
struct DeviceRow {
    std::uint32_t index = 0;
    std::string name;
    std::string type;
    std::string vendor_device; // "10de:2330"
    std::string pci;           // "pci:0000:3b:00.0", empty where the driver reports none
    std::string uuid;
};

// Which worker the layer would pick, resolved against this machine's devices as the layer's
// embedded runtime resolves it (layer/src/frame_generation.cpp: RuntimeOptions::workers, CPU
// devices allowed, the only physical device opened a second time).
struct WorkerChoice {
    std::vector<DeviceRow> devices;
    std::optional<std::uint32_t> program_device; // assumed: the one Tandem's auto choice takes
    std::vector<std::uint32_t> workers;          // the layer names the first
    bool second_opening = false;                 // the program's own device opened again
    std::string reason;                          // one sentence: why these, or why none
};

struct LayerStatus {
    std::vector<ManifestPlace> places;
    const ManifestPlace* installed = nullptr; // the first usable implicit manifest
    const ManifestPlace* build = nullptr;     // the build folder's, when usable
    bool enable_set = false;
    bool disable_set = false;
    bool in_instance_layers = false;
    layer_config::ConfigLocation location;
    bool file_found = false;
    std::string program; // --program, empty when none
    layer_config::FramegenConfig config;
    WorkerChoice worker;
    std::string active_reason;
    bool active = false;
};

// What the layer does with the multiplier set: generates (2, 3) or passes frames through. A
// program's device may still refuse generation; the layer logs why, and its report says.
bool generates(const LayerStatus& status) {
    return status.config.multiplier && *status.config.multiplier > 1;
}

std::string mode_reason(const LayerStatus& status) {
    const layer_config::Origin& origin = status.config.origin("multiplier");
    if (!status.config.multiplier) {
        return "TANDEM_FRAMEGEN_MULTIPLIER='" + origin.text + "' is not 1, 2 or 3";
    }
    if (*status.config.multiplier == 1) {
        return "multiplier 1 (" + origin.where + ") turns frame generation off";
    }
    return "";
}

std::string hex_ids(const DeviceInfo& d) {
    char ids[16];
    std::snprintf(ids, sizeof(ids), "%04x:%04x", d.vendor_id & 0xffffu, d.device_id & 0xffffu);
    return ids;
}

// Lists the devices on an instance of its own (no device opened, validation off) and resolves
// the worker setting against them with the library's selectors. Never throws: a machine without
// Vulkan, or a selector that matches nothing, is said in `reason`.
WorkerChoice choose_worker(const std::string& worker) {
    WorkerChoice choice;
    // The listing instance is the CLI's own: an installed layer enabled in this environment has
    // nothing to do in it (the status has read both variables already).
    setenv("DISABLE_TANDEM_FRAMEGEN", "1", 1);
    try {
        harness::SessionOptions options;
        options.validation = "off";
        options.virtual_devices = "1";
        options.workers = "none";
        const harness::DeviceSession session(options);
        for (const DeviceInfo& d : session.adapters()) {
            choice.devices.push_back({d.index, d.name, d.type, hex_ids(d),
                                      d.pci_address.empty() ? "" : "pci:" + d.pci_address,
                                      to_string(d.device_uuid)});
        }
        const std::uint32_t program = session.primary();
        choice.program_device = program;
        const bool alone = choice.devices.size() == 1;
        if (worker == "auto") {
            for (const DeviceRow& d : choice.devices) {
                if (d.index != program) {
                    choice.workers.push_back(d.index);
                }
            }
            if (alone) {
                choice.workers.push_back(program);
            }
            choice.second_opening = alone;
            choice.reason = alone ? "auto: the only device, opened a second time as the worker"
                                  : "auto: every device but the program's, CPU devices included; "
                                    "the first is named in the report";
            return choice;
        }
        // The layer opens the only physical device twice, so that a selector naming it has a
        // second opening to take.
        options.virtual_devices = alone ? "2" : "1";
        options.primary = std::to_string(program);
        options.workers = worker;
        const harness::DeviceSession selected(options);
        for (const std::uint32_t index : selected.workers()) {
            // With two openings of one device, index 1 is that device again.
            const std::uint32_t physical = alone ? 0 : index;
            if (std::find(choice.workers.begin(), choice.workers.end(), physical) ==
                choice.workers.end()) {
                choice.workers.push_back(physical);
            }
        }
        choice.second_opening = std::find(choice.workers.begin(), choice.workers.end(), program) !=
                                choice.workers.end();
        choice.reason =
            "'" + worker + "' matches " + std::to_string(choice.workers.size()) +
            (choice.workers.size() == 1 ? " device" : " devices") +
            (choice.second_opening ? " (the program's own is opened a second time)" : "");
    } catch (const std::exception& e) {
        choice.workers.clear();
        choice.reason = e.what();
    }
    return choice;
}

LayerStatus layer_status(const std::string& program) {
    LayerStatus status;
    for (const fs::path& folder : implicit_folders()) {
        ManifestPlace place;
        place.folder = folder;
        place.kind = "implicit";
        status.places.push_back(place);
    }
    if (const auto folder = build_folder_layer()) {
        ManifestPlace place;
        place.folder = *folder;
        place.kind = "explicit";
        status.places.push_back(place);
    }
    for (ManifestPlace& place : status.places) {
        inspect(place);
    }
    for (const ManifestPlace& place : status.places) {
        const bool usable = place.manifest_found && place.library_found && place.problem.empty();
        if (usable && place.kind == "implicit" && status.installed == nullptr) {
            status.installed = &place;
        }
        if (usable && place.kind == "explicit") {
            status.build = &place;
        }
    }
    status.enable_set = env_or("ENABLE_TANDEM_FRAMEGEN", "") == "1";
    status.disable_set = env_or("DISABLE_TANDEM_FRAMEGEN", "") == "1";
    for (const std::string& name : split_paths(env_or("VK_INSTANCE_LAYERS", ""))) {
        status.in_instance_layers = status.in_instance_layers || name == k_layer_name;
    }
    // The layer's own reading (layer_config.hpp), for a program of this name.
    const layer_config::EnvLookup env = [](const char* name) -> const char* {
        return std::getenv(name);
    };
    status.program = program;
    status.location = layer_config::config_location(env);
    std::string read_error;
    const auto text = layer_config::read_config_file(status.location.path, read_error);
    status.file_found = text.has_value();
    status.config = layer_config::resolve(text ? status.location.path : std::string(),
                                          text ? *text : std::string(), {program, program}, env);
    if (!read_error.empty()) {
        status.config.problems.insert(status.config.problems.begin(), read_error);
    }

    if (status.installed != nullptr && status.disable_set) {
        status.active_reason = "DISABLE_TANDEM_FRAMEGEN=1 turns the installed layer off";
    } else if (status.installed != nullptr && status.enable_set) {
        status.active = true;
        status.active_reason = "the installed layer is enabled by ENABLE_TANDEM_FRAMEGEN=1";
    } else if (status.in_instance_layers) {
        status.active = true;
        status.active_reason = "VK_INSTANCE_LAYERS names the layer (found where VK_LAYER_PATH or "
                               "VK_ADD_LAYER_PATH points)";
    } else if (status.installed != nullptr) {
        status.active_reason = "installed, off until ENABLE_TANDEM_FRAMEGEN=1 (or `tandem layer "
                               "run -- PROGRAM`)";
    } else if (status.build != nullptr) {
        status.active_reason = "not installed; `tandem layer run -- PROGRAM` uses this build's "
                               "layer";
    } else {
        status.active_reason = "no manifest found: install Tandem (cmake --install) or run "
                               "`tandem` from a build folder";
    }
    return status;
}

// Each setting's value as the layer would use it.
nlohmann::json setting_value(const layer_config::FramegenConfig& config, std::string_view key) {
    if (key == "multiplier") {
        return config.multiplier ? nlohmann::json(*config.multiplier) : nlohmann::json(nullptr);
    }
    if (key == "worker") {
        return config.worker;
    }
    if (key == "wait_ms") {
        return config.wait.count();
    }
    if (key == "verify") {
        return config.verify;
    }
    if (key == "dump") {
        return config.dump_folder;
    }
    if (key == "dump_frames") {
        return config.dump_frames;
    }
    if (key == "report") {
        return config.report_path;
    }
    if (key == "scale") {
        return config.scale;
    }
    if (key == "copies") {
        return config.copies;
    }
    if (key == "display") {
        return config.display;
    }
    if (key == "queue") {
        return config.queue;
    }
    return config.present_mode
               ? nlohmann::json(layer_config::present_mode_name(*config.present_mode))
               : nlohmann::json(nullptr);
}

// "default", "environment" or "file", from an Origin's `where`.
std::string source_of(const layer_config::Origin& origin) {
    if (origin.where == "default") {
        return "default";
    }
    return origin.where.rfind("TANDEM_FRAMEGEN_", 0) == 0 ? "environment" : "file";
}

std::string device_text(const WorkerChoice& choice, std::uint32_t index) {
    for (const DeviceRow& d : choice.devices) {
        if (d.index == index) {
            return std::to_string(index) + ": " + d.name + " (" + d.vendor_device +
                   (d.pci.empty() ? "" : ", " + d.pci) + ")";
        }
    }
    return std::to_string(index);
}

nlohmann::json status_json(const LayerStatus& status) {
    nlohmann::json places = nlohmann::json::array();
    for (const ManifestPlace& place : status.places) {
        places.push_back({{"folder", place.folder.string()},
                          {"kind", place.kind},
                          {"manifest_found", place.manifest_found},
                          {"library", place.library.string()},
                          {"library_found", place.library_found},
                          {"problem", place.problem}});
    }
    const auto path_of = [](const ManifestPlace* place) {
        return place != nullptr ? nlohmann::json((place->folder / k_manifest_file).string())
                                : nlohmann::json(nullptr);
    };
    const layer_config::FramegenConfig& config = status.config;
    nlohmann::json settings = nlohmann::json::object();
    for (const char* key : layer_config::k_keys) {
        const layer_config::Origin& origin = config.origin(key);
        settings[key] = {{"value", setting_value(config, key)},
                         {"text", origin.text},
                         {"source", source_of(origin)},
                         {"where", origin.where}};
    }
    const auto or_null = [](const std::string& text) {
        return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
    };
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceRow& d : status.worker.devices) {
        devices.push_back({{"index", d.index},
                           {"name", d.name},
                           {"type", d.type},
                           {"vendor_device", d.vendor_device},
                           {"pci", or_null(d.pci)},
                           {"uuid", d.uuid}});
    }
    const WorkerChoice& worker = status.worker;
    return {{"layer", k_layer_name},
            {"installed_manifest", path_of(status.installed)},
            {"build_manifest", path_of(status.build)},
            {"manifest_folders", places},
            {"enable_tandem_framegen", status.enable_set},
            {"disable_tandem_framegen", status.disable_set},
            {"in_vk_instance_layers", status.in_instance_layers},
            {"active", status.active},
            {"active_reason", status.active_reason},
            {"config_file",
             {{"path", or_null(status.location.path)},
              {"from", or_null(status.location.rule)},
              {"found", status.file_found}}},
            {"program", or_null(status.program)},
            {"profile", or_null(config.profile)},
            {"settings", settings},
            {"problems", config.problems},
            {"multiplier", setting_value(config, "multiplier")},
            {"multiplier_setting", config.origin("multiplier").text},
            {"report", config.report_path},
            {"worker", config.worker},
            {"devices", devices},
            {"worker_device",
             {{"program_device", worker.program_device ? nlohmann::json(*worker.program_device)
                                                       : nlohmann::json(nullptr)},
              {"workers", worker.workers},
              {"second_opening", worker.second_opening},
              {"reason", worker.reason}}},
            {"mode", generates(status) ? "generating" : "pass-through"},
            {"mode_reason", mode_reason(status)}};
}

void print_status(const LayerStatus& status) {
    std::printf("Layer %s (%s)\n", k_layer_name,
                generates(status) ? "generates frames on a worker device"
                                  : ("pass-through: " + mode_reason(status)).c_str());
    const auto where = [](const ManifestPlace* place) {
        return place != nullptr ? (place->folder / k_manifest_file).string()
                                : std::string("not found");
    };
    std::printf("  installed manifest  %s\n", where(status.installed).c_str());
    std::printf("  build manifest      %s\n", where(status.build).c_str());
    std::printf("  ENABLE_TANDEM_FRAMEGEN   %s\n", status.enable_set ? "1" : "not set");
    std::printf("  DISABLE_TANDEM_FRAMEGEN  %s\n", status.disable_set ? "1" : "not set");
    std::printf("  active              %s: %s\n", status.active ? "yes" : "no",
                status.active_reason.c_str());

    const layer_config::FramegenConfig& config = status.config;
    if (status.location.path.empty()) {
        std::printf("  config file         none (neither XDG_CONFIG_HOME nor HOME is set)\n");
    } else {
        std::printf("  config file         %s (from %s)%s\n", status.location.path.c_str(),
                    status.location.rule.c_str(),
                    status.file_found ? "" : ": absent, so no profile");
    }
    if (status.program.empty()) {
        std::printf("  profile             none: the global section (--program NAME for a "
                    "program's)\n");
    } else if (config.profile.empty()) {
        std::printf("  profile             none for '%s': the global section\n",
                    status.program.c_str());
    } else {
        std::printf("  profile             [program %s]\n", config.profile.c_str());
    }
    std::printf("  settings (environment over the file):\n");
    for (const char* key : layer_config::k_keys) {
        const nlohmann::json value = setting_value(config, key);
        std::string text = value.is_string() ? value.get<std::string>() : value.dump();
        if (std::string_view(key) == "multiplier" && !config.multiplier) {
            text = "invalid ('" + config.origin(key).text + "'): frames pass through";
        } else if (value.is_null() || text.empty()) {
            text = std::string_view(key) == "present_mode" ? "the program's own" : "none";
        }
        std::printf("    %-13s %-28s %s\n", key, text.c_str(), config.origin(key).where.c_str());
    }
    for (const std::string& problem : config.problems) {
        std::printf("  problem: %s\n", problem.c_str());
    }

    const WorkerChoice& worker = status.worker;
    std::printf("  devices (selectors stay across boots; an index does not):\n");
    for (const DeviceRow& d : worker.devices) {
        std::printf("    %u  %-28s %-10s %s  %-18s %s\n", d.index, d.name.c_str(), d.type.c_str(),
                    d.vendor_device.c_str(), d.pci.empty() ? "-" : d.pci.c_str(), d.uuid.c_str());
    }
    if (worker.program_device) {
        std::printf("  program's device    %s (assumed: the one Tandem's auto choice takes; the "
                    "layer uses the device the program presents on)\n",
                    device_text(worker, *worker.program_device).c_str());
    }
    if (worker.workers.empty()) {
        std::printf("  worker device       none: %s\n", worker.reason.c_str());
    } else {
        std::printf("  worker device       %s: %s\n",
                    device_text(worker, worker.workers.front()).c_str(), worker.reason.c_str());
    }
    std::printf("  folders searched:\n");
    for (const ManifestPlace& place : status.places) {
        std::printf("    %-8s %s%s%s\n", place.kind.c_str(), place.folder.c_str(),
                    place.manifest_found ? "  (manifest)" : "",
                    place.problem.empty() ? "" : ("  " + place.problem).c_str());
    }
}

// "NAME[:old value]" unless the old value already holds NAME.
std::string prepend_path(const char* variable, const std::string& entry) {
    const std::string old = env_or(variable, "");
    for (const std::string& item : split_paths(old)) {
        if (item == entry) {
            return old;
        }
    }
    return old.empty() ? entry : entry + ":" + old;
}

void set_env(const char* name, const std::string& value) {
    if (setenv(name, value.c_str(), 1) != 0) {
        throw Error(std::string("could not set ") + name + ": " + std::strerror(errno));
    }
}

[[noreturn]] void run_program(const LayerArgs& args) {
    const LayerStatus status = layer_status("");
    if (status.installed == nullptr && status.build == nullptr) {
        throw Error("the Tandem layer's manifest is found neither where the Vulkan loader looks "
                    "for installed layers nor in this build",
                    "Install Tandem (cmake --install build), or run the `tandem` of a build "
                    "folder; `tandem layer status` lists the folders searched");
    }
    if (args.lp_num_threads_unset) {
        unsetenv("LP_NUM_THREADS");
    }
    unsetenv("DISABLE_TANDEM_FRAMEGEN");
    set_env("ENABLE_TANDEM_FRAMEGEN", "1");
    if (status.installed == nullptr) {
        // Not installed: the build folder's explicit manifest, named to the loader.
        set_env("VK_ADD_LAYER_PATH", prepend_path("VK_ADD_LAYER_PATH", status.build->folder));
        set_env("VK_INSTANCE_LAYERS", prepend_path("VK_INSTANCE_LAYERS", k_layer_name));
    }
    if (!args.multiplier.empty()) {
        set_env("TANDEM_FRAMEGEN_MULTIPLIER", args.multiplier);
    }
    if (!args.report.empty()) {
        // Absolute: a game's launcher may change the working folder before the layer writes.
        set_env("TANDEM_FRAMEGEN_REPORT", fs::absolute(args.report).string());
    }
    if (args.log) {
        set_env("TANDEM_FRAMEGEN_LOG", "1");
    }
    if (!args.worker.empty()) {
        set_env("TANDEM_FRAMEGEN_WORKER", args.worker);
    }
    if (!args.present_mode.empty()) {
        set_env("TANDEM_FRAMEGEN_PRESENT_MODE", args.present_mode);
    }
    if (!args.verify.empty()) {
        set_env("TANDEM_FRAMEGEN_VERIFY", args.verify);
    }
    if (!args.dump.empty()) {
        set_env("TANDEM_FRAMEGEN_DUMP", fs::absolute(args.dump).string());
    }
    if (!args.copies.empty()) {
        set_env("TANDEM_FRAMEGEN_COPIES", args.copies);
    }
    if (!args.display.empty()) {
        set_env("TANDEM_FRAMEGEN_DISPLAY", args.display);
    }
    if (!args.queue.empty()) {
        set_env("TANDEM_FRAMEGEN_QUEUE", args.queue);
    }
    if (!args.scale.empty()) {
        set_env("TANDEM_FRAMEGEN_SCALE", args.scale);
    }
    std::vector<char*> argv;
    for (const std::string& word : args.program) {
        argv.push_back(const_cast<char*>(word.c_str()));
    }
    argv.push_back(nullptr);
    std::fflush(stdout);
    execvp(argv[0], argv.data());
    throw Error("could not run '" + args.program[0] + "': " + std::strerror(errno),
                "Check the program's name or path");
}

} // namespace

Runner add_layer_command(CLI::App& app, const GlobalOptions& /*global*/) {
    auto args = std::make_shared<LayerArgs>();
    CLI::App* layer = app.add_subcommand(
        "layer", "The Vulkan layer VK_LAYER_TANDEM_frame_generation (docs/layer.md): where it is "
                 "installed and its settings; running a program with it, its frames generated on "
                 "a worker device");
    layer->require_subcommand(1);
    CLI::App* status = layer->add_subcommand(
        "status", "Whether the Vulkan loader finds the layer's manifest (installed implicit-layer "
                  "folders, this build), whether ENABLE_TANDEM_FRAMEGEN is set, the configuration "
                  "file and profile, each setting the layer would use and where it comes from "
                  "(environment, FILE:LINE, default), and the worker device it would pick among "
                  "this machine's devices");
    status->add_flag("--json", args->json, "Print the status as JSON");
    status->add_option("--program", args->status_program,
                       "The executable's file name whose [program NAME] profile to show (as the "
                       "layer matches it); default: none, the global section only");
    CLI::App* run = layer->add_subcommand(
        "run", "Run PROGRAM with the layer enabled: sets ENABLE_TANDEM_FRAMEGEN=1 (and clears "
               "DISABLE_TANDEM_FRAMEGEN), names this build's layer to the loader when none is "
               "installed, then replaces itself with the program (exec), whose exit status is "
               "then the command's. As a Steam launch option: tandem layer run -- %command%");
    run->add_option("--multiplier", args->multiplier,
                    "TANDEM_FRAMEGEN_MULTIPLIER for the program: 1 (off), 2 or 3 frames per real "
                    "frame")
        ->check(CLI::IsMember({"1", "2", "3"}));
    run->add_option("--report", args->report,
                    "TANDEM_FRAMEGEN_REPORT for the program: the JSON report's file");
    run->add_option("--worker", args->worker,
                    "TANDEM_FRAMEGEN_WORKER for the program: the worker device, by PCI address, "
                    "vendor:device, UUID prefix or part of its name (`tandem devices` lists "
                    "them); default auto");
    run->add_option("--present-mode", args->present_mode,
                    "TANDEM_FRAMEGEN_PRESENT_MODE for the program: fifo, mailbox, immediate or "
                    "fifo_relaxed in place of the program's own, where the surface has it")
        ->check(CLI::IsMember({"fifo", "mailbox", "immediate", "fifo_relaxed"}));
    run->add_option("--verify", args->verify,
                    "TANDEM_FRAMEGEN_VERIFY for the program: 1 holds every other real frame back, "
                    "generates it and reports its PSNR against the frame drawn (at 2x)")
        ->check(CLI::IsMember({"0", "1"}));
    run->add_option("--dump", args->dump,
                    "TANDEM_FRAMEGEN_DUMP for the program: a folder for the first frames "
                    "presented, as PPM files");
    run->add_option("--scale", args->scale,
                    "TANDEM_FRAMEGEN_SCALE for the program: its render scale, 0.25 to 1 (1: off); "
                    "below 1 it renders that much smaller than its window and each frame is "
                    "upscaled to the window on the worker")
        ->check(CLI::Range(0.25, 1.0));
    run->add_option("--copies", args->copies,
                    "TANDEM_FRAMEGEN_COPIES for the program: how the primary copies each frame "
                    "into Tandem's input: auto (a compute dispatch on a GPU, the copy command on a "
                    "CPU device), compute or command")
        ->check(CLI::IsMember({"auto", "compute", "command"}));
    run->add_option("--display", args->display,
                    "TANDEM_FRAMEGEN_DISPLAY for the program: where frames go out: program (its "
                    "own device presents them) or worker (the worker presents real and "
                    "generated frames to the program's window)")
        ->check(CLI::IsMember({"program", "worker"}));
    run->add_option("--queue", args->queue,
                    "TANDEM_FRAMEGEN_QUEUE for the program: which queue of its device Tandem "
                    "submits to: shared (the program's, the default) or own (one of its own, "
                    "added where the program's queue family has one to spare; else the "
                    "program's)")
        ->check(CLI::IsMember({"shared", "own"}));
    run->add_flag("--log", args->log, "TANDEM_FRAMEGEN_LOG=1: the layer logs what it does");
    run->add_option("program", args->program, "The program and its arguments, after --")
        ->required()
        ->expected(-1);

    return [args, status, run]() -> int {
        if (status->parsed()) {
            LayerStatus found = layer_status(args->status_program);
            found.worker = choose_worker(found.config.worker);
            if (args->json) {
                std::printf("%s\n", status_json(found).dump(2).c_str());
            } else {
                print_status(found);
            }
            return 0;
        }
        if (run->parsed()) {
            run_program(*args);
        }
        return 2;
    };
}

} // namespace tandem::cli
