#include "render/mesh_cache.hpp"

#include <cstring>

#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

VkDeviceSize align16(VkDeviceSize v) {
    return (v + 15) & ~VkDeviceSize{15};
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

VkDescriptorSet MeshCache::texture_set(VkImageView view) {
    VkDescriptorSetLayout layout = m_set_layout.get();
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = m_pool.get();
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    vk_check(vkAllocateDescriptorSets(m_device.handle(), &alloc, &set),
             "vkAllocateDescriptorSets material");
    VkDescriptorImageInfo image{m_sampler.get(), view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = &image;
    vkUpdateDescriptorSets(m_device.handle(), 1, &write, 0, nullptr);
    return set;
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
    const VkDevice dev = m_device.handle();

    // The pool holds one set per texture plus the white one.
    const auto sets = static_cast<std::uint32_t>(a.textures.size() + 1);
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, sets};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = sets;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    VkDescriptorPool p = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(dev, &pool, nullptr, &p), "vkCreateDescriptorPool materials");
    m_pool = Handle<VkDescriptorPool>(
        p, [dev](VkDescriptorPool x) { vkDestroyDescriptorPool(dev, x, nullptr); });
    m_pool_capacity = sets;

    // Lay out one staging buffer: the white texel, every texture, then every mesh.
    static const Texture white{"white", 1, 1, {255, 255, 255, 255}};
    std::vector<const Texture*> textures{&white};
    for (const Texture& t : a.textures) {
        if (t.width == 0 || t.height == 0 ||
            t.rgba.size() != static_cast<std::size_t>(t.width) * t.height * 4) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Texture '" + t.name + "' has no valid RGBA8 pixels");
        }
        textures.push_back(&t);
    }
    VkDeviceSize staging_size = 0;
    std::vector<VkDeviceSize> texture_offsets;
    for (const Texture* t : textures) {
        texture_offsets.push_back(staging_size);
        staging_size = align16(staging_size + t->rgba.size());
    }
    struct MeshLayout {
        VkDeviceSize vertex_offset, vertex_bytes, index_offset, index_bytes;
    };
    std::vector<MeshLayout> mesh_layouts;
    for (const Mesh& m : a.meshes) {
        MeshLayout l{};
        for (const Primitive& prim : m.primitives) {
            l.vertex_bytes += prim.vertices.size() * sizeof(Vertex);
            l.index_bytes += prim.indices.size() * sizeof(std::uint32_t);
        }
        l.vertex_offset = staging_size;
        staging_size = align16(staging_size + l.vertex_bytes);
        l.index_offset = staging_size;
        staging_size = align16(staging_size + l.index_bytes);
        mesh_layouts.push_back(l);
    }
    Buffer staging = create_buffer(m_device, {staging_size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                              VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                              m_device.label() + " mesh cache staging"});
    auto* base = static_cast<std::uint8_t*>(staging.mapped);
    for (std::size_t i = 0; i < textures.size(); ++i) {
        std::memcpy(base + texture_offsets[i], textures[i]->rgba.data(), textures[i]->rgba.size());
    }

    // Device-local destinations.
    for (std::size_t i = 0; i < textures.size(); ++i) {
        m_textures.push_back(
            create_image(m_device, {textures[i]->width,
                                    textures[i]->height,
                                    VK_FORMAT_R8G8B8A8_UNORM,
                                    VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                    m_device.label() + " texture " + textures[i]->name,
                                    {}}));
    }
    std::vector<GpuMesh> meshes(a.meshes.size());
    for (std::size_t i = 0; i < a.meshes.size(); ++i) {
        const Mesh& m = a.meshes[i];
        const MeshLayout& l = mesh_layouts[i];
        GpuMesh& g = meshes[i];
        g.bounds = m.bounds;
        std::uint32_t first_index = 0;
        std::int32_t vertex_offset = 0;
        VkDeviceSize vo = l.vertex_offset;
        VkDeviceSize io = l.index_offset;
        for (const Primitive& prim : m.primitives) {
            if (prim.material >= a.materials.size() && !a.materials.empty()) {
                throw Error(ErrorCategory::InvalidArgument,
                            "Mesh '" + m.name + "' names material " +
                                std::to_string(prim.material) + ", which does not exist");
            }
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
        if (l.vertex_bytes > 0 && l.index_bytes > 0) {
            g.vertices = create_buffer(
                m_device,
                {l.vertex_bytes,
                 VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0,
                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, m_device.label() + " vertices " + m.name});
            g.indices = create_buffer(
                m_device,
                {l.index_bytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, m_device.label() + " indices " + m.name});
        } else {
            g.primitives.clear();
        }
    }
    flush_buffer(m_device, staging);

    submit_and_wait(m_device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        for (std::size_t i = 0; i < textures.size(); ++i) {
            VkImage image = m_textures[i].get();
            image_barrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED,
                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE, 0,
                          VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            VkBufferImageCopy copy{};
            copy.bufferOffset = texture_offsets[i];
            copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            copy.imageExtent = {textures[i]->width, textures[i]->height, 1};
            vkCmdCopyBufferToImage(cmd, staging.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                   1, &copy);
            image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
                          VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
        }
        for (std::size_t i = 0; i < meshes.size(); ++i) {
            if (!meshes[i].vertices.buffer) {
                continue;
            }
            const MeshLayout& l = mesh_layouts[i];
            VkBufferCopy v{l.vertex_offset, 0, l.vertex_bytes};
            vkCmdCopyBuffer(cmd, staging.get(), meshes[i].vertices.get(), 1, &v);
            VkBufferCopy ix{l.index_offset, 0, l.index_bytes};
            vkCmdCopyBuffer(cmd, staging.get(), meshes[i].indices.get(), 1, &ix);
        }
        memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT |
                           VK_PIPELINE_STAGE_2_INDEX_INPUT_BIT,
                       VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_2_INDEX_READ_BIT);
    });

    for (std::size_t i = 0; i < textures.size(); ++i) {
        m_texture_sets.push_back(texture_set(m_textures[i].view.get()));
        ++m_upload_count;
        m_uploaded_bytes += textures[i]->rgba.size();
    }
    for (std::size_t i = 0; i < meshes.size(); ++i) {
        if (meshes[i].vertices.buffer) {
            ++m_upload_count;
            m_uploaded_bytes += mesh_layouts[i].vertex_bytes + mesh_layouts[i].index_bytes;
        }
    }
    m_meshes = std::move(meshes);
    m_default_material = {glm::vec4(1.0f), m_texture_sets[0]};
    for (const Material& m : a.materials) {
        const std::uint32_t tex = m.base_color_texture ? *m.base_color_texture + 1 : 0;
        if (tex >= m_texture_sets.size()) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Material '" + m.name + "' names a texture that does not exist");
        }
        m_materials.push_back({m.base_color, m_texture_sets[tex]});
    }
    m_assets = assets;
}

} // namespace tandem::detail
