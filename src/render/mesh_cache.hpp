// MeshCache: the geometry and textures of one SceneAssets, uploaded once to one device through
// a staging buffer, plus the sampler and descriptor sets the renderer binds for materials.
// Changing transforms or cameras never touches it: snapshots refer to meshes by id.
//
// One cache per device and scene assets. upload() is set-up work (blocks until the copies
// complete, throws tandem::Error); everything else is const and may be read by the thread
// recording commands. Destroy only when no command buffer using it is in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <glm/glm.hpp>
#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "scene/scene.hpp"

namespace tandem::detail {

struct GpuPrimitive {
    std::uint32_t first_index = 0;
    std::uint32_t index_count = 0;
    std::int32_t vertex_offset = 0;
    std::uint32_t material = 0;
};

struct GpuMesh {
    Buffer vertices;
    Buffer indices;
    std::vector<GpuPrimitive> primitives;
    Bounds bounds;
};

struct GpuMaterial {
    glm::vec4 base_color{1.0f};
    VkDescriptorSet texture_set = VK_NULL_HANDLE; // the base colour texture, or white
};

// The material set layout (one combined image sampler, fragment stage): the cache's sets use
// it, and the mesh pipeline is made with one defined the same.
[[nodiscard]] Handle<VkDescriptorSetLayout> create_material_layout(const Device& device);

class MeshCache {
public:
    explicit MeshCache(const Device& device);
    MeshCache(const MeshCache&) = delete;
    MeshCache& operator=(const MeshCache&) = delete;

    // Uploads every mesh and texture of `assets`. A second call with the same assets does
    // nothing; a cache holds one scene's assets, so other assets are refused.
    void upload(const std::shared_ptr<const SceneAssets>& assets);

    [[nodiscard]] const Device& device() const noexcept { return m_device; }
    [[nodiscard]] const GpuMesh* mesh(std::uint32_t id) const noexcept {
        return id < m_meshes.size() ? &m_meshes[id] : nullptr;
    }
    [[nodiscard]] std::size_t mesh_count() const noexcept { return m_meshes.size(); }
    [[nodiscard]] const GpuMaterial& material(std::uint32_t id) const noexcept {
        return id < m_materials.size() ? m_materials[id] : m_default_material;
    }
    [[nodiscard]] VkDescriptorSetLayout texture_layout() const noexcept {
        return m_set_layout.get();
    }
    [[nodiscard]] VkSampler sampler() const noexcept { return m_sampler.get(); }

    // Staging uploads done so far (one per mesh, one per texture, one for the white texture),
    // and the bytes they carried. Tests use them to prove that nothing is re-uploaded.
    [[nodiscard]] std::uint64_t upload_count() const noexcept { return m_upload_count; }
    [[nodiscard]] std::uint64_t uploaded_bytes() const noexcept { return m_uploaded_bytes; }

private:
    // Points `set` at `view` through the cache's sampler.
    void write_texture_set(VkDescriptorSet set, VkImageView view) const;
    // The descriptor pool and a set per texture of `textures` ([0]: white), and the materials of
    // `a` over them (check_assets checked their textures).
    void make_materials(const SceneAssets& a, const std::vector<Image>& textures);

    const Device& m_device;
    Handle<VkSampler> m_sampler;
    Handle<VkDescriptorSetLayout> m_set_layout;
    Handle<VkDescriptorPool> m_pool;
    std::shared_ptr<const SceneAssets> m_assets;
    std::vector<GpuMesh> m_meshes;
    std::vector<Image> m_textures; // [0] is white
    std::vector<VkDescriptorSet> m_texture_sets;
    std::vector<GpuMaterial> m_materials;
    GpuMaterial m_default_material;
    std::uint64_t m_upload_count = 0;
    std::uint64_t m_uploaded_bytes = 0;
};

} // namespace tandem::detail
