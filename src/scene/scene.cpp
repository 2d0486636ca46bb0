#include "scene/scene.hpp"

#include <algorithm>
#include <cmath>

#include <glm/gtc/matrix_transform.hpp>

#include "tandem/error.hpp"

namespace tandem::detail {

void Bounds::add(const glm::vec3& p) {
    if (empty) {
        min = max = p;
        empty = false;
        return;
    }
    min = glm::min(min, p);
    max = glm::max(max, p);
}

void Bounds::add(const Bounds& other) {
    if (!other.empty) {
        add(other.min);
        add(other.max);
    }
}

Bounds Bounds::transformed(const glm::mat4& m) const {
    Bounds out;
    if (empty) {
        return out;
    }
    for (int i = 0; i < 8; ++i) {
        const glm::vec3 corner{(i & 1) ? max.x : min.x, (i & 2) ? max.y : min.y,
                               (i & 4) ? max.z : min.z};
        out.add(glm::vec3(m * glm::vec4(corner, 1.0f)));
    }
    return out;
}

Scene::Scene(std::shared_ptr<const SceneAssets> assets) : m_assets(std::move(assets)) {}

std::uint32_t Scene::add_node(Node node) {
    const auto index = static_cast<std::uint32_t>(m_nodes.size());
    if (node.parent && *node.parent >= index) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Node '" + node.name + "' names a parent that is not added yet",
                    "Add parents before their children");
    }
    if (node.mesh && *node.mesh >= m_assets->meshes.size()) {
        throw Error(ErrorCategory::InvalidArgument, "Node '" + node.name + "' names mesh " +
                                                        std::to_string(*node.mesh) +
                                                        ", which does not exist");
    }
    m_own_tags.push_back(node.tags);
    m_rest.push_back(node.local);
    m_nodes.push_back(std::move(node));
    return index;
}

std::uint32_t Scene::add_camera(std::string name, std::uint32_t node, const CameraModel& model) {
    if (node >= m_nodes.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Camera '" + name + "' names a node that does not exist");
    }
    const auto index = static_cast<std::uint32_t>(m_cameras.size());
    m_cameras.push_back({std::move(name), node, model});
    m_nodes[node].camera = index;
    return index;
}

void Scene::add_motion(const Motion& motion) {
    if (motion.node >= m_nodes.size()) {
        throw Error(ErrorCategory::InvalidArgument, "A motion names a node that does not exist");
    }
    m_motions.push_back(motion);
}

void Scene::set_rest_transform(std::uint32_t node, const glm::mat4& local) {
    m_rest.at(node) = local;
    m_nodes.at(node).local = local;
}

void Scene::animate(double seconds) {
    for (const Motion& m : m_motions) {
        const glm::mat4& rest = m_rest[m.node];
        // Angles wrap in double before going to float, so long runs keep their precision.
        const double turns = static_cast<double>(m.speed) * seconds + m.phase;
        const auto angle = static_cast<float>(std::fmod(turns, 2.0 * 3.14159265358979323846));
        glm::mat4 local = rest;
        switch (m.kind) {
        case Motion::Kind::Spin:
            local = rest * glm::rotate(glm::mat4(1.0f), angle, glm::normalize(m.axis));
            break;
        case Motion::Kind::Bob: {
            const auto lift = static_cast<float>(
                m.amplitude * std::sin(std::fmod(turns * 2.0 * 3.14159265358979323846,
                                                 2.0 * 3.14159265358979323846)));
            local = glm::translate(glm::mat4(1.0f), glm::vec3(0.0f, lift, 0.0f)) * rest;
            break;
        }
        case Motion::Kind::Orbit: {
            const glm::vec3 eye = m.center + glm::vec3(m.radius * std::cos(angle), m.height,
                                                       m.radius * std::sin(angle));
            local = camera_transform(eye, m.center);
            break;
        }
        }
        m_nodes[m.node].local = local;
    }
    update_world();
}

void Scene::update_world() {
    // Parents come before children (add_node enforces it), so one forward pass suffices.
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        Node& node = m_nodes[i];
        node.tags = m_own_tags[i];
        if (node.parent) {
            const Node& parent = m_nodes[*node.parent];
            node.world = parent.world * node.local;
            for (const std::string& tag : parent.tags) {
                if (std::find(node.tags.begin(), node.tags.end(), tag) == node.tags.end()) {
                    node.tags.push_back(tag);
                }
            }
        } else {
            node.world = node.local;
        }
    }
}

std::optional<std::uint32_t> Scene::find_node(std::string_view name) const {
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        if (m_nodes[i].name == name) {
            return static_cast<std::uint32_t>(i);
        }
    }
    return std::nullopt;
}

std::optional<std::uint32_t> Scene::find_camera(std::string_view name) const {
    for (std::size_t i = 0; i < m_cameras.size(); ++i) {
        if (m_cameras[i].name == name) {
            return static_cast<std::uint32_t>(i);
        }
    }
    for (std::size_t i = 0; i < m_cameras.size(); ++i) {
        if (m_nodes[m_cameras[i].node].name == name) {
            return static_cast<std::uint32_t>(i);
        }
    }
    return std::nullopt;
}

Bounds Scene::world_bounds() const {
    Bounds out;
    for (const Node& node : m_nodes) {
        if (node.mesh) {
            out.add(m_assets->meshes[*node.mesh].bounds.transformed(node.world));
        }
    }
    return out;
}

glm::mat4 projection_matrix(const CameraModel& model, float aspect) {
    const float n = model.znear;
    const float f = model.zfar;
    glm::mat4 p(0.0f);
    if (model.projection == Projection::Perspective) {
        const float t = 1.0f / std::tan(model.yfov * 0.5f);
        p[0][0] = t / aspect;
        p[1][1] = -t; // Vulkan clip space: y down
        p[2][2] = f / (n - f);
        p[2][3] = -1.0f;
        p[3][2] = n * f / (n - f);
    } else {
        // The task's aspect wins over xmag so that pixels stay square.
        const float ymag = model.ymag;
        const float xmag = ymag * aspect;
        p[0][0] = 1.0f / xmag;
        p[1][1] = -1.0f / ymag;
        p[2][2] = 1.0f / (n - f);
        p[3][2] = n / (n - f);
        p[3][3] = 1.0f;
    }
    return p;
}

glm::mat4 camera_transform(const glm::vec3& eye, const glm::vec3& target) {
    glm::vec3 forward = target - eye;
    if (glm::length(forward) < 1e-6f) {
        forward = {0.0f, 0.0f, -1.0f};
    }
    forward = glm::normalize(forward);
    // Straight down (or up) has no horizon: pick -Z as the image's up direction then.
    glm::vec3 up{0.0f, 1.0f, 0.0f};
    if (std::abs(glm::dot(forward, up)) > 0.999f) {
        up = {0.0f, 0.0f, -1.0f};
    }
    const glm::vec3 right = glm::normalize(glm::cross(forward, up));
    const glm::vec3 true_up = glm::cross(right, forward);
    glm::mat4 m(1.0f);
    m[0] = glm::vec4(right, 0.0f);
    m[1] = glm::vec4(true_up, 0.0f);
    m[2] = glm::vec4(-forward, 0.0f);
    m[3] = glm::vec4(eye, 1.0f);
    return m;
}

} // namespace tandem::detail
