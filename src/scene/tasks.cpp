#include "scene/tasks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/json_refusal.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

using Json = nlohmann::json;

const char* const k_schema_hint = "See docs/tasks-json.md for the tasks file format";

bool valid_task_name(const std::string& name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(),
                       [](char c) {
                           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
                       }) &&
           name[0] != '.';
}

std::string join_problems(const std::vector<std::string>& problems) {
    std::string out;
    for (const std::string& p : problems) {
        out += "\n  " + p;
    }
    return out;
}

struct Reader {
    std::vector<std::string>& problems;

    void problem(const std::string& path, const std::string& message) {
        problems.push_back(path + ": " + message);
    }

    const Json* member(const Json& obj, const std::string& path, const char* key, bool required) {
        auto it = obj.find(key);
        if (it == obj.end()) {
            if (required) {
                problem(path + "/" + key, "is missing");
            }
            return nullptr;
        }
        return &*it;
    }

    std::optional<std::string> string(const Json* v, const std::string& path) {
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_string()) {
            problem(path, "must be a string");
            return std::nullopt;
        }
        auto s = v->get<std::string>();
        if (s.empty()) {
            problem(path, "must not be empty");
            return std::nullopt;
        }
        return s;
    }

    void unknown_keys(const Json& obj, const std::string& path,
                      std::initializer_list<const char*> known) {
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (std::none_of(known.begin(), known.end(),
                             [&](const char* k) { return it.key() == k; })) {
                problem(path + "/" + it.key(), "is not a known key");
            }
        }
    }
};

void read_task(Reader& r, const Json& t, const std::string& path, TaskSpec& out) {
    if (!t.is_object()) {
        r.problem(path, "must be an object");
        return;
    }
    r.unknown_keys(t, path,
                   {"name", "camera", "resolution", "rate", "placement", "surface", "tags"});
    if (auto name = r.string(r.member(t, path, "name", true), path + "/name")) {
        if (valid_task_name(*name)) {
            out.name = *name;
        } else {
            r.problem(path + "/name", "'" + *name +
                                          "' must be 1-64 letters, digits, '_', '-' or '.' "
                                          "(it names output files)");
        }
    }
    if (auto camera = r.string(r.member(t, path, "camera", true), path + "/camera")) {
        out.camera = *camera;
    }
    if (const Json* res = r.member(t, path, "resolution", true)) {
        const std::string p = path + "/resolution";
        std::optional<std::pair<std::uint32_t, std::uint32_t>> size;
        if (res->is_string()) {
            size = parse_size(res->get<std::string>());
            if (!size) {
                r.problem(p, "'" + res->get<std::string>() +
                                 "' is not WIDTHxHEIGHT with each side 1 to " +
                                 std::to_string(k_max_task_size));
            }
        } else if (res->is_array() && res->size() == 2 && (*res)[0].is_number_integer() &&
                   (*res)[1].is_number_integer()) {
            const auto w = (*res)[0].get<std::int64_t>();
            const auto h = (*res)[1].get<std::int64_t>();
            if (w < 1 || h < 1 || w > k_max_task_size || h > k_max_task_size) {
                r.problem(p, std::to_string(w) + "x" + std::to_string(h) +
                                 " is not a usable size (each side 1 to " +
                                 std::to_string(k_max_task_size) + ")");
            } else {
                size = std::pair{static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h)};
            }
        } else {
            r.problem(p, "must be \"WIDTHxHEIGHT\" or [width, height]");
        }
        if (size) {
            out.width = size->first;
            out.height = size->second;
        }
    }
    if (const Json* rate = r.member(t, path, "rate", true)) {
        const double v = rate->is_number() ? rate->get<double>() : -1.0;
        if (!rate->is_number() || !std::isfinite(v) || v <= 0.0 || v > k_max_task_rate_hz) {
            r.problem(path + "/rate",
                      "must be a number of updates per second above 0 and at most " +
                          std::to_string(static_cast<int>(k_max_task_rate_hz)));
        } else {
            out.rate_hz = v;
        }
    }
    if (auto placement = r.string(r.member(t, path, "placement", false), path + "/placement")) {
        if (auto p = parse_placement(*placement)) {
            out.placement = *p;
        } else {
            r.problem(path + "/placement",
                      "'" + *placement +
                          "' is not a placement (auto, primary, worker, worker:N, an adapter "
                          "index or device:SELECTOR)");
        }
    }
    if (const Json* surface = r.member(t, path, "surface", false); surface && !surface->is_null()) {
        out.surface = r.string(surface, path + "/surface");
    }
    if (const Json* tags = r.member(t, path, "tags", false)) {
        if (!tags->is_array()) {
            r.problem(path + "/tags", "must be an array of strings");
        } else {
            for (std::size_t i = 0; i < tags->size(); ++i) {
                if (auto tag = r.string(&(*tags)[i], path + "/tags/" + std::to_string(i))) {
                    out.tags.push_back(*tag);
                }
            }
        }
    }
}

} // namespace

std::optional<std::pair<std::uint32_t, std::uint32_t>> parse_size(std::string_view text) {
    const auto x = text.find('x');
    if (x == std::string_view::npos) {
        return std::nullopt;
    }
    auto number = [](std::string_view s) -> std::optional<std::uint32_t> {
        std::uint32_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || end != s.data() + s.size() || s.empty() || v < 1 ||
            v > k_max_task_size) {
            return std::nullopt;
        }
        return v;
    };
    auto w = number(text.substr(0, x));
    auto h = number(text.substr(x + 1));
    if (!w || !h) {
        return std::nullopt;
    }
    return std::pair{*w, *h};
}

TasksFile parse_tasks(std::string_view json, const std::string& origin) {
    Json doc;
    try {
        doc = Json::parse(json.begin(), json.end());
    } catch (const Json::parse_error& e) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Tasks file " + origin + " is not valid JSON (byte " + std::to_string(e.byte) +
                        ")",
                    k_schema_hint);
    } catch (const Json::exception&) {
        // The parser's one other refusal: a number beyond what a double holds (1e999).
        const JsonRefusal where = locate_json_refusal(json);
        throw Error(ErrorCategory::InvalidArgument,
                    "Tasks file " + origin + " has 1 problem:\n  " + where.pointer + ": " +
                        where.token + " is a number out of range (byte " +
                        std::to_string(where.byte) + ")",
                    k_schema_hint);
    }
    std::vector<std::string> problems;
    Reader r{problems};
    TasksFile out;
    if (!doc.is_object()) {
        r.problem("/", "the document must be an object with a \"tasks\" array");
    } else {
        r.unknown_keys(doc, "", {"main", "tasks"});
        if (const Json* main = r.member(doc, "", "main", false)) {
            if (!main->is_object()) {
                r.problem("/main", "must be an object");
            } else {
                r.unknown_keys(*main, "/main", {"camera"});
                out.main_camera =
                    r.string(r.member(*main, "/main", "camera", false), "/main/camera");
            }
        }
        if (const Json* tasks = r.member(doc, "", "tasks", true)) {
            if (!tasks->is_array()) {
                r.problem("/tasks", "must be an array");
            } else {
                std::set<std::string> names;
                for (std::size_t i = 0; i < tasks->size(); ++i) {
                    const std::string path = "/tasks/" + std::to_string(i);
                    TaskSpec task;
                    read_task(r, (*tasks)[i], path, task);
                    if (!task.name.empty() && !names.insert(task.name).second) {
                        r.problem(path + "/name", "'" + task.name + "' is used by another task");
                    }
                    out.tasks.push_back(std::move(task));
                }
            }
        }
    }
    if (!problems.empty()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Tasks file " + origin + " has " + std::to_string(problems.size()) +
                        (problems.size() == 1 ? " problem:" : " problems:") +
                        join_problems(problems),
                    k_schema_hint);
    }
    return out;
}

TasksFile load_tasks(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Error("Cannot open tasks file " + path, "Check the path given to --tasks");
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return parse_tasks(buffer.str(), path);
}

std::vector<std::string> check_tasks(const TasksFile& tasks, const Scene& scene) {
    std::vector<std::string> problems;
    auto camera_names = [&] {
        std::string names;
        for (const SceneCamera& c : scene.cameras()) {
            names += (names.empty() ? "" : ", ") + c.name;
        }
        return names.empty() ? std::string("none") : names;
    };
    if (tasks.main_camera && !scene.find_camera(*tasks.main_camera)) {
        problems.push_back("/main/camera: the scene has no camera '" + *tasks.main_camera +
                           "' (cameras: " + camera_names() + ")");
    }
    for (std::size_t i = 0; i < tasks.tasks.size(); ++i) {
        const TaskSpec& t = tasks.tasks[i];
        const std::string path = "/tasks/" + std::to_string(i);
        if (!scene.find_camera(t.camera)) {
            problems.push_back(path + "/camera: the scene has no camera '" + t.camera +
                               "' (cameras: " + camera_names() + ")");
        }
        if (t.surface) {
            auto node = scene.find_node(*t.surface);
            if (!node) {
                problems.push_back(path + "/surface: the scene has no node '" + *t.surface + "'");
            } else if (!scene.nodes()[*node].mesh) {
                problems.push_back(path + "/surface: node '" + *t.surface +
                                   "' has no mesh to show the output on");
            }
        }
        for (std::size_t j = 0; j < t.tags.size(); ++j) {
            const bool used = std::any_of(scene.nodes().begin(), scene.nodes().end(), [&](auto& n) {
                return std::find(n.tags.begin(), n.tags.end(), t.tags[j]) != n.tags.end();
            });
            if (!used) {
                problems.push_back(path + "/tags/" + std::to_string(j) + ": no node carries tag '" +
                                   t.tags[j] + "'");
            }
        }
    }
    return problems;
}

void require_valid_tasks(const TasksFile& tasks, const Scene& scene, const std::string& origin) {
    const auto problems = check_tasks(tasks, scene);
    if (!problems.empty()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Tasks file " + origin + " does not fit scene '" + scene.name() +
                        "':" + join_problems(problems),
                    k_schema_hint);
    }
}

} // namespace tandem::detail
