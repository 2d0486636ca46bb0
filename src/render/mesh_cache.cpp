#include "render/mesh_cache.hpp"

#include <cstring>

#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

VkDeviceSize align16(VkDeviceSize v) {
    return (v + 15) & ~VkDeviceSize{15};
}

// Where one mesh's vertices and indices sit in the staging buffer.
struct MeshLayout {
    VkDeviceSize vertex_offset = 0;
    VkDeviceSize vertex_bytes = 0;
    VkDeviceSize index_offset = 0;
    VkDeviceSize index_bytes = 0;
};

// The one staging buffer of an upload: the white texel, every texture, then every mesh.
struct StagingLayout {
    std::vector<const Texture*> textures; // [0]: the white texel
    std::vector<VkDeviceSize> texture_offsets;
    std::vector<MeshLayout> meshes;
    VkDeviceSize size = 0;
};

// Throws Error for what in `a` could not be drawn (a texture without its pixels, a material or
// primitive naming what does not exist): checked before anything is made, so that a refused
// upload leaves the cache as it was.
void check_assets(const SceneAssets& a) {
    for (const Texture& t : a.textures) {
        if (t.width == 0 || t.height == 0 ||
            t.rgba.size() != static_cast<std::size_t>(t.width) * t.height * 4) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Texture '" + t.name + "' has no valid RGBA8 pixels");
        }
    }
    for (const Material& m : a.materials) {
        if (m.base_color_texture && *m.base_color_texture >= a.textures.size()) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Material '" + m.name + "' names a texture that does not exist");
        }
    }
    for (const Mesh& m : a.meshes) {
        for (const Primitive& prim : m.primitives) {
            if (prim.material >= a.materials.size() && !a.materials.empty()) {
                throw Error(ErrorCategory::InvalidArgument,
                            "Mesh '" + m.name + "' names material " +
                                std::to_string(prim.material) + ", which does not exist");
            }
        }
    }
}

StagingLayout lay_out(const SceneAssets& a) {
    static const Texture white{"white", 1, 1, {255, 255, 255, 255}};
    StagingLayout out;
    out.textures.push_back(&white);
    for (const Texture& t : a.textures) {
        out.textures.push_back(&t);
    }
    for (const Texture* t : out.textures) {
        out.texture_offsets.push_back(out.size);
        out.size = align16(out.size + t->rgba.size());
    }
    for (const Mesh& m : a.meshes) {
        MeshLayout l;
        for (const Primitive& prim : m.primitives) {
            l.vertex_bytes += prim.vertices.size() * sizeof(Vertex);
            l.index_bytes += prim.indices.size() * sizeof(std::uint32_t);
        }
        l.vertex_offset = out.size;
        out.size = align16(out.size + l.vertex_bytes);
        l.index_offset = out.size;
        out.size = align16(out.size + l.index_bytes);
        out.meshes.push_back(l);
    }
    return out;
}

// Copies every texture and mesh of `a` to where `layout` puts it in the staging memory at
// `base`, and returns each mesh's primitives as drawn from that memory once on the device.
std::vector<GpuMesh> fill_staging(const SceneAssets& a, const StagingLayout& layout,
                                  std::uint8_t* base) {
    for (std::size_t i = 0; i < layout.textures.size(); ++i) {
        std::memcpy(base + layout.texture_offsets[i], layout.textures[i]->rgba.data(),
                    layout.textures[i]->rgba.size());
    }
    std::vector<GpuMesh> meshes(a.meshes.size());
    for (std::size_t i = 0; i < a.meshes.size(); ++i) {
        const Mesh& m = a.meshes[i];
        GpuMesh& g = meshes[i];
        g.bounds = m.bounds;
        std::uint32_t first_index = 0;
        std::int32_t vertex_offset = 0;
        VkDeviceSize vo = layout.meshes[i].vertex_offset;
        VkDeviceSize io = layout.meshes[i].index_offset;
        for (const Primitive& prim : m.primitives) {
            g.primitives.push_back({first_index, static_cast<std::uint32_t>(prim.indices.size()),
                                    vertex_offset, prim.material});
            std::memcpy(base + vo, prim.vertices.data(), prim.vertices.size() * sizeof(Vertex));
            std::memcpy(base + io, prim.indices.data(),
                        prim.indices.size() * sizeof(std::uint32_t));
            vo += prim.vertices.size() * sizeof(Vertex);
            io += prim.indices.size() * sizeof(std::uint32_t);
            first_index += static_cast<std::uint32_t>(prim.indices.size());
            vertex_offset += static_cast<std::int32_t>(prim.vertices.size());
        }
    }
    return meshes;
}

// The copies from staging to the textures and meshes, each texture left for sampling in the
// fragment stage and the meshes for vertex input.
void record_uploads(VkCommandBuffer cmd, VkBuffer staging, const StagingLayout& layout,
                    const std::vector<Image>& textures, const std::vector<GpuMesh>& meshes) {
    for (std::size_t i = 0; i < textures.size(); ++i) {
        VkImage image = textures[i].get();
        image_barrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      VK_PIPELINE_STAGE_2_NONE, 0, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkBufferImageCopy copy{};
        copy.bufferOffset = layout.texture_offsets[i];
        copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        copy.imageExtent = {layout.textures[i]->width, layout.textures[i]->height, 1};
        vkCmdCopyBufferToImage(cmd, staging, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
        image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
                      VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
    }
    for (std::size_t i = 0; i < meshes.size(); ++i) {
        if (!meshes[i].vertices.buffer) {
            continue;
        }
        const MeshLayout& l = layout.meshes[i];
        VkBufferCopy v{l.vertex_offset, 0, l.vertex_bytes};
        vkCmdCopyBuffer(cmd, staging, meshes[i].vertices.get(), 1, &v);
        VkBufferCopy ix{l.index_offset, 0, l.index_bytes};
        vkCmdCopyBuffer(cmd, staging, meshes[i].indices.get(), 1, &ix);
    }
    memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT |
                       VK_PIPELINE_STAGE_2_INDEX_INPUT_BIT,
                   VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_2_INDEX_READ_BIT);
}

} // namespace

Handle<VkDescriptorSetLayout> create_material_layout(const Device& device) {
    const VkDevice dev = device.handle();
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT;
    VkDescriptorSetLayoutCreateInfo layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    layout.bindingCount = 1;
    layout.pBindings = &binding;
    VkDescriptorSetLayout l = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorSetLayout(dev, &layout, nullptr, &l),
             "vkCreateDescriptorSetLayout material");
    return Handle<VkDescriptorSetLayout>(
        l, [dev](VkDescriptorSetLayout x) { vkDestroyDescriptorSetLayout(dev, x, nullptr); });
}

MeshCache::MeshCache(const Device& device) : m_device(device) {
    const VkDevice dev = device.handle();
    VkSamplerCreateInfo sampler{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    sampler.magFilter = VK_FILTER_LINEAR;
    sampler.minFilter = VK_FILTER_LINEAR;
    sampler.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
    sampler.addressModeU = VK_SAMPLER_ADDRESS_MODE_REPEAT;
    sampler.addressModeV = VK_SAMPLER_ADDRESS_MODE_REPEAT;
    sampler.addressModeW = VK_SAMPLER_ADDRESS_MODE_REPEAT;
    sampler.maxLod = 0.0f;
    VkSampler s = VK_NULL_HANDLE;
    vk_check(vkCreateSampler(dev, &sampler, nullptr, &s), "vkCreateSampler mesh cache");
    m_sampler = Handle<VkSampler>(s, [dev](VkSampler x) { vkDestroySampler(dev, x, nullptr); });
    device.name(s, VK_OBJECT_TYPE_SAMPLER, device.label() + " material sampler");

    m_set_layout = create_material_layout(device);
}

void MeshCache::write_texture_set(VkDescriptorSet set, VkImageView view) const {
    VkDescriptorImageInfo image{m_sampler.get(), view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = &image;
    vkUpdateDescriptorSets(m_device.handle(), 1, &write, 0, nullptr);
}

void MeshCache::upload(const std::shared_ptr<const SceneAssets>& assets) {
    if (!assets) {
        throw Error(ErrorCategory::InvalidArgument, "MeshCache::upload was given no scene assets");
    }
    if (m_assets == assets) {
        return;
    }
    if (m_assets) {
        throw Error(ErrorCategory::InvalidArgument,
                    "This mesh cache already holds another scene's assets",
                    "Use one MeshCache per device and scene");
    }
    const SceneAssets& a = *assets;
    check_assets(a);
    const StagingLayout layout = lay_out(a);
    Buffer staging = create_buffer(m_device, {layout.size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                              VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                              m_device.label() + " mesh cache staging"});
    std::vector<GpuMesh> meshes =
        fill_staging(a, layout, static_cast<std::uint8_t*>(staging.mapped));
    flush_buffer(m_device, staging);

    // Device-local destinations, made before the cache changes: a failure leaves it empty.
    std::vector<Image> textures;
    for (const Texture* t : layout.textures) {
        textures.push_back(
            create_image(m_device, {t->width,
                                    t->height,
                                    VK_FORMAT_R8G8B8A8_UNORM,
                                    VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                    m_device.label() + " texture " + t->name,
                                    {}}));
    }
    for (std::size_t i = 0; i < meshes.size(); ++i) {
        const MeshLayout& l = layout.meshes[i];
        const std::string& name = a.meshes[i].name;
        if (l.vertex_bytes == 0 || l.index_bytes == 0) {
            meshes[i].primitives.clear();
            continue;
        }
        meshes[i].vertices = create_buffer(
            m_device,
            {l.vertex_bytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
             0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, m_device.label() + " vertices " + name});
        meshes[i].indices = create_buffer(
            m_device,
            {l.index_bytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, m_device.label() + " indices " + name});
    }
    submit_and_wait(m_device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        record_uploads(cmd, staging.get(), layout, textures, meshes);
    });
    make_materials(a, textures);

    for (std::size_t i = 0; i < layout.textures.size(); ++i) {
        ++m_upload_count;
        m_uploaded_bytes += layout.textures[i]->rgba.size();
    }
    for (std::size_t i = 0; i < meshes.size(); ++i) {
        if (meshes[i].vertices.buffer) {
            ++m_upload_count;
            m_uploaded_bytes += layout.meshes[i].vertex_bytes + layout.meshes[i].index_bytes;
        }
    }
    m_textures = std::move(textures);
    m_meshes = std::move(meshes);
    m_assets = assets;
}

void MeshCache::make_materials(const SceneAssets& a, const std::vector<Image>& textures) {
    // One set per texture, the white one included.
    static constexpr VkDescriptorPoolSize k_per_set{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1};
    DescriptorSets sets =
        allocate_descriptor_sets(m_device, m_set_layout.get(), {&k_per_set, 1},
                                 static_cast<std::uint32_t>(textures.size()), "materials");
    for (std::size_t i = 0; i < textures.size(); ++i) {
        write_texture_set(sets.sets[i], textures[i].view.get());
    }
    m_pool = std::move(sets.pool);
    m_texture_sets = std::move(sets.sets);
    m_default_material = {glm::vec4(1.0f), m_texture_sets[0]};
    m_materials.clear();
    for (const Material& m : a.materials) {
        const std::uint32_t tex = m.base_color_texture ? *m.base_color_texture + 1 : 0;
        m_materials.push_back({m.base_color, m_texture_sets[tex]});
    }
}

} // namespace tandem::detail
