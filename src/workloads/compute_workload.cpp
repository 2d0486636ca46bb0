// tandem::compute_workload (tandem/compute.hpp): the module checked with SPIRV-Tools and
// reflected with SPIRV-Cross once, when the factory is made; then, per device, a compute
// pipeline over the reflected interface, built with the public WorkerContext alone.
#include "tandem/compute.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <spirv-tools/libspirv.h>
#include <spirv_cross/spirv_cross_c.h>

#include "core/pipeline_shelf.hpp"
#include "core/resources.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem {
namespace {

constexpr const char* k_fix = "Check the module and the ComputeTaskDesc against tandem/compute.hpp";

[[noreturn]] void refuse(const std::string& what, const std::string& fix = k_fix) {
    throw Error(ErrorCategory::InvalidArgument, "The compute task's SPIR-V " + what, fix);
}

void validate(const std::vector<std::uint32_t>& words) {
    if (words.empty()) {
        refuse("is empty");
    }
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_const_binary_t binary{words.data(), words.size()};
    spv_diagnostic diagnostic = nullptr;
    const spv_result_t result = spvValidate(context, &binary, &diagnostic);
    std::string why =
        diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "";
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);
    if (result != SPV_SUCCESS) {
        refuse("is not valid for Vulkan 1.3 (SPIRV-Tools: " + (why.empty() ? "error" : why) + ")");
    }
}

// The SPIR-V image formats (GLSL's layout qualifiers) and the Vulkan format a storage image of
// each must have (the Vulkan specification's "Compatibility Between SPIR-V Image Formats And
// Vulkan Formats").
struct StorageFormat {
    SpvImageFormat spirv;
    const char* glsl;
    VkFormat vulkan;
};
constexpr StorageFormat k_storage_formats[] = {
    {SpvImageFormatRgba32f, "rgba32f", VK_FORMAT_R32G32B32A32_SFLOAT},
    {SpvImageFormatRgba16f, "rgba16f", VK_FORMAT_R16G16B16A16_SFLOAT},
    {SpvImageFormatR32f, "r32f", VK_FORMAT_R32_SFLOAT},
    {SpvImageFormatRgba8, "rgba8", VK_FORMAT_R8G8B8A8_UNORM},
    {SpvImageFormatRgba8Snorm, "rgba8_snorm", VK_FORMAT_R8G8B8A8_SNORM},
    {SpvImageFormatRg32f, "rg32f", VK_FORMAT_R32G32_SFLOAT},
    {SpvImageFormatRg16f, "rg16f", VK_FORMAT_R16G16_SFLOAT},
    {SpvImageFormatR11fG11fB10f, "r11f_g11f_b10f", VK_FORMAT_B10G11R11_UFLOAT_PACK32},
    {SpvImageFormatR16f, "r16f", VK_FORMAT_R16_SFLOAT},
    {SpvImageFormatRgba16, "rgba16", VK_FORMAT_R16G16B16A16_UNORM},
    {SpvImageFormatRgb10A2, "rgb10_a2", VK_FORMAT_A2B10G10R10_UNORM_PACK32},
    {SpvImageFormatRg16, "rg16", VK_FORMAT_R16G16_UNORM},
    {SpvImageFormatRg8, "rg8", VK_FORMAT_R8G8_UNORM},
    {SpvImageFormatR16, "r16", VK_FORMAT_R16_UNORM},
    {SpvImageFormatR8, "r8", VK_FORMAT_R8_UNORM},
    {SpvImageFormatRgba16Snorm, "rgba16_snorm", VK_FORMAT_R16G16B16A16_SNORM},
    {SpvImageFormatRg16Snorm, "rg16_snorm", VK_FORMAT_R16G16_SNORM},
    {SpvImageFormatRg8Snorm, "rg8_snorm", VK_FORMAT_R8G8_SNORM},
    {SpvImageFormatR16Snorm, "r16_snorm", VK_FORMAT_R16_SNORM},
    {SpvImageFormatR8Snorm, "r8_snorm", VK_FORMAT_R8_SNORM},
    {SpvImageFormatRgba32i, "rgba32i", VK_FORMAT_R32G32B32A32_SINT},
    {SpvImageFormatRgba16i, "rgba16i", VK_FORMAT_R16G16B16A16_SINT},
    {SpvImageFormatRgba8i, "rgba8i", VK_FORMAT_R8G8B8A8_SINT},
    {SpvImageFormatR32i, "r32i", VK_FORMAT_R32_SINT},
    {SpvImageFormatRg32i, "rg32i", VK_FORMAT_R32G32_SINT},
    {SpvImageFormatRg16i, "rg16i", VK_FORMAT_R16G16_SINT},
    {SpvImageFormatRg8i, "rg8i", VK_FORMAT_R8G8_SINT},
    {SpvImageFormatR16i, "r16i", VK_FORMAT_R16_SINT},
    {SpvImageFormatR8i, "r8i", VK_FORMAT_R8_SINT},
    {SpvImageFormatRgba32ui, "rgba32ui", VK_FORMAT_R32G32B32A32_UINT},
    {SpvImageFormatRgba16ui, "rgba16ui", VK_FORMAT_R16G16B16A16_UINT},
    {SpvImageFormatRgba8ui, "rgba8ui", VK_FORMAT_R8G8B8A8_UINT},
    {SpvImageFormatR32ui, "r32ui", VK_FORMAT_R32_UINT},
    {SpvImageFormatRgb10a2ui, "rgb10_a2ui", VK_FORMAT_A2B10G10R10_UINT_PACK32},
    {SpvImageFormatRg32ui, "rg32ui", VK_FORMAT_R32G32_UINT},
    {SpvImageFormatRg16ui, "rg16ui", VK_FORMAT_R16G16_UINT},
    {SpvImageFormatRg8ui, "rg8ui", VK_FORMAT_R8G8_UINT},
    {SpvImageFormatR16ui, "r16ui", VK_FORMAT_R16_UINT},
    {SpvImageFormatR8ui, "r8ui", VK_FORMAT_R8_UINT},
    {SpvImageFormatR64ui, "r64ui", VK_FORMAT_R64_UINT},
    {SpvImageFormatR64i, "r64i", VK_FORMAT_R64_SINT},
};

const StorageFormat* find_storage_format(SpvImageFormat f) {
    for (const auto& entry : k_storage_formats) {
        if (entry.spirv == f) {
            return &entry;
        }
    }
    return nullptr;
}

// The texel type a shader reads and writes an image of `format` with: a uint image (uimage2D)
// for the UINT formats, an int one for SINT, a float one for every other colour format.
spvc_basetype texel_type(VkFormat format) {
    for (const auto& entry : k_storage_formats) {
        if (entry.vulkan == format) {
            const std::string_view glsl = entry.glsl;
            if (glsl.ends_with("ui")) {
                return SPVC_BASETYPE_UINT32;
            }
            if (glsl.ends_with("i")) {
                return SPVC_BASETYPE_INT32;
            }
        }
    }
    return SPVC_BASETYPE_FP32;
}

const char* texel_type_name(spvc_basetype t) {
    return t == SPVC_BASETYPE_UINT32  ? "uimage2D (uint texels)"
           : t == SPVC_BASETYPE_INT32 ? "iimage2D (int texels)"
                                      : "image2D (float texels)";
}

// What the module's output image is (set 0, binding 0): its format qualifier (Unknown: none)
// and its texel type; checked against the task's format when the workload is made on a device.
struct OutputImage {
    SpvImageFormat format = SpvImageFormatUnknown;
    spvc_basetype texel = SPVC_BASETYPE_FP32;
};

// TaskDesc::inputs holds at most 8 (registration refuses more): their bindings follow the
// ComputeTaskDesc's buffers.
constexpr std::uint32_t k_max_task_inputs = 8;

// How the module reads a task input (TaskDesc::inputs) at its binding.
enum class InputKind {
    CombinedSampler, // sampler2D: Tandem's nearest, clamp-to-edge sampler with the input's view
    SampledImage,    // texture2D (texelFetch without a sampler)
    StorageImage,    // readonly image2D (imageLoad), from the workload's copy of the input
    StorageBuffer,   // a buffer input (TaskInputDesc::buffer_size)
};

// One binding past the ComputeTaskDesc's buffers as the module declares it; checked against the
// task's input there when the workload is made on a device.
struct TaskInputBinding {
    std::uint32_t binding = 0;
    std::uint32_t input = 0; // its index in TaskDesc::inputs
    InputKind kind = InputKind::SampledImage;
    std::string what;                              // the module's declaration, for refusals
    SpvImageFormat format = SpvImageFormatUnknown; // a storage image's format qualifier
    spvc_basetype texel = SPVC_BASETYPE_FP32;      // an image's texel type
    std::size_t fixed = 0;                         // a buffer block's fixed part, in bytes
    std::size_t stride = 0;                        // its runtime array's element (0: none)
};

// What the module's interface is, from SPIRV-Cross.
struct Reflection {
    std::array<std::uint32_t, 3> local_size{1, 1, 1};
    std::vector<OutputImage> outputs;          // the images the module declares at set 0, binding 0
    std::vector<TaskInputBinding> task_inputs; // in binding order
};

// `count` inputs from binding `first` on, as a phrase: "1 input, at binding 1".
std::string inputs_at(std::size_t count, std::size_t first) {
    return count == 1 ? "1 input, at binding " + std::to_string(first)
                      : std::to_string(count) + " inputs, at bindings " + std::to_string(first) +
                            ".." + std::to_string(first + count - 1);
}

// What the ComputeTaskDesc declares past the output, as a phrase.
std::string buffers_declared(std::size_t inputs) {
    return inputs == 0 ? std::string("no inputs, only the output at binding 0")
                       : inputs_at(inputs, 1);
}

// The descriptor the description puts at set 0, `binding`, as a phrase.
std::string declared_at(std::uint32_t binding, const ComputeTaskDesc& desc) {
    const std::size_t inputs = desc.input_bytes.size();
    if (binding == 0) {
        return "the output there, one storage image (image2D) of the task's format";
    }
    if (binding <= inputs) {
        return "input " + std::to_string(binding) + " there, one storage buffer of " +
               std::to_string(desc.input_bytes[binding - 1]) + " bytes";
    }
    if (binding <= inputs + k_max_task_inputs) {
        return "the task's input " + std::to_string(binding - inputs - 1) +
               " (TaskDesc::inputs) there: a sampler2D, a texture2D or a readonly image2D for "
               "an image, a readonly buffer block for a buffer";
    }
    return "nothing there: it declares " + buffers_declared(inputs) +
           ", and a task's inputs (at most " + std::to_string(k_max_task_inputs) +
           ") follow at bindings " + std::to_string(inputs + 1) + ".." +
           std::to_string(inputs + k_max_task_inputs);
}

class Reflector {
public:
    explicit Reflector(const std::vector<std::uint32_t>& words) {
        spvc_context_create(&m_context);
        spvc_parsed_ir ir = nullptr;
        if (spvc_context_parse_spirv(m_context, words.data(), words.size(), &ir) != SPVC_SUCCESS ||
            spvc_context_create_compiler(m_context, SPVC_BACKEND_NONE, ir,
                                         SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                         &m_compiler) != SPVC_SUCCESS) {
            const std::string why = spvc_context_get_last_error_string(m_context);
            spvc_context_destroy(m_context);
            refuse("cannot be reflected (SPIRV-Cross: " + why + ")");
        }
    }
    ~Reflector() { spvc_context_destroy(m_context); }
    Reflector(const Reflector&) = delete;
    Reflector& operator=(const Reflector&) = delete;

    Reflection check(const ComputeTaskDesc& desc) {
        select_entry_point(desc.entry_point);
        Reflection out;
        for (unsigned i = 0; i < 3; ++i) {
            out.local_size[i] = spvc_compiler_get_execution_mode_argument_by_index(
                m_compiler, SpvExecutionModeLocalSize, i);
        }
        for (unsigned i = 0; i < 3; ++i) {
            if (desc.workgroup_size[i] != 0 && desc.workgroup_size[i] != out.local_size[i]) {
                refuse("declares workgroup size " + size3(out.local_size) + ", the description " +
                       size3(desc.workgroup_size));
            }
        }
        // LocalSizeId (a size from specialisation constants) reads as 0 here: refused too.
        if (out.local_size[0] == 0 || out.local_size[1] == 0 || out.local_size[2] != 1) {
            refuse("declares workgroup size " + size3(out.local_size) +
                   ": a 2D image task needs LocalSize x y 1 with x, y > 0");
        }
        if (desc.input_bytes.size() > k_max_compute_inputs) {
            throw Error(ErrorCategory::InvalidArgument,
                        "The compute task has " + std::to_string(desc.input_bytes.size()) +
                            " inputs",
                        "Use at most 8 storage buffers");
        }
        spvc_resources resources = nullptr;
        if (spvc_compiler_create_shader_resources(m_compiler, &resources) != SPVC_SUCCESS) {
            refuse("has resources SPIRV-Cross cannot list");
        }
        check_push_constants(resources, desc.push_constant_bytes);
        check_bindings(resources, desc, out);
        if (out.outputs.empty()) {
            refuse("has no storage image at set 0, binding 0 (the task's output)",
                   "Declare the output as layout(set = 0, binding = 0, <format>) uniform "
                   "writeonly image2D (tandem/compute.hpp)");
        }
        return out;
    }

private:
    static std::string size3(const std::array<std::uint32_t, 3>& s) {
        return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    }

    void select_entry_point(const std::string& name) {
        const spvc_entry_point* entries = nullptr;
        std::size_t count = 0;
        spvc_compiler_get_entry_points(m_compiler, &entries, &count);
        std::string found;
        for (std::size_t i = 0; i < count; ++i) {
            if (name == entries[i].name &&
                entries[i].execution_model == SpvExecutionModelGLCompute) {
                spvc_compiler_set_entry_point(m_compiler, name.c_str(), SpvExecutionModelGLCompute);
                return;
            }
            found +=
                (found.empty() ? "" : ", ") + std::string(entries[i].name) +
                (entries[i].execution_model == SpvExecutionModelGLCompute ? "" : " (not compute)");
        }
        refuse("has no compute entry point '" + name +
               "' (it has: " + (found.empty() ? "none" : found) + ")");
    }

    std::vector<spvc_reflected_resource> list(spvc_resources resources, spvc_resource_type type) {
        const spvc_reflected_resource* items = nullptr;
        std::size_t count = 0;
        spvc_resources_get_resource_list_for_type(resources, type, &items, &count);
        return {items, items + count};
    }

    std::uint32_t decoration(spvc_variable_id id, SpvDecoration d) {
        return spvc_compiler_get_decoration(m_compiler, id, d);
    }

    void check_push_constants(spvc_resources resources, std::uint32_t declared) {
        const auto blocks = list(resources, SPVC_RESOURCE_TYPE_PUSH_CONSTANT);
        std::size_t size = 0;
        if (!blocks.empty()) {
            spvc_type type = spvc_compiler_get_type_handle(m_compiler, blocks[0].base_type_id);
            spvc_compiler_get_declared_struct_size(m_compiler, type, &size);
        }
        if (size != declared) {
            refuse("has a push-constant block of " + std::to_string(size) +
                   " bytes; the description says " + std::to_string(declared));
        }
        if (declared % 4 != 0) {
            refuse("has a push-constant block of " + std::to_string(size) +
                       " bytes; Vulkan pushes whole 4-byte words",
                   "Pad the push-constant block to a multiple of 4 bytes");
        }
    }

    // An optimised module has no names; SPIRV-Cross then makes one up ("_20_22"): not shown.
    static std::string shown(const char* name) {
        const std::string_view given = name != nullptr ? name : "";
        const bool made_up =
            given.size() > 1 && given[0] == '_' && given[1] >= '0' && given[1] <= '9';
        return made_up ? std::string() : std::string(given);
    }

    static std::string in_parentheses(const std::string& name) {
        return name.empty() ? "" : " (" + name.substr(1) + ")";
    }

    // The descriptor kind of one resource, as the shader author wrote it: "a combined image
    // sampler (sampler2D 'source')".
    std::string describe(const spvc_reflected_resource& r, spvc_resource_type kind) {
        const spvc_type type = spvc_compiler_get_type_handle(m_compiler, r.base_type_id);
        // The variable's own name (a buffer's reflected name is its block's).
        const std::string variable = shown(spvc_compiler_get_name(m_compiler, r.id));
        const std::string name = variable.empty() ? "" : " '" + variable + "'";
        const auto image = [&](const char* prefix) {
            static constexpr const char* dims[] = {"1D",   "2D",     "3D",         "Cube",
                                                   "Rect", "Buffer", "SubpassData"};
            const SpvDim dim = spvc_type_get_image_dimension(type);
            const auto d = static_cast<unsigned>(dim);
            std::string s = std::string(prefix) + (d < 7 ? dims[d] : "?") +
                            (spvc_type_get_image_multisampled(type) ? "MS" : "") +
                            (spvc_type_get_image_arrayed(type) ? "Array" : "");
            return s;
        };
        switch (kind) {
        case SPVC_RESOURCE_TYPE_UNIFORM_BUFFER:
        case SPVC_RESOURCE_TYPE_STORAGE_BUFFER: {
            const char* block = spvc_compiler_get_name(m_compiler, r.base_type_id);
            const std::string what =
                shown(block).empty() ? (name.empty() ? "" : name.substr(1)) : shown(block) + name;
            return std::string(kind == SPVC_RESOURCE_TYPE_UNIFORM_BUFFER ? "a uniform buffer"
                                                                         : "a storage buffer") +
                   (what.empty() ? "" : " (" + what + ")");
        }
        case SPVC_RESOURCE_TYPE_STORAGE_IMAGE: {
            const StorageFormat* f = find_storage_format(spvc_type_get_image_storage_format(type));
            const bool texel_buffer = spvc_type_get_image_dimension(type) == SpvDimBuffer;
            return std::string(texel_buffer ? "a storage texel buffer (" : "a storage image (") +
                   image("image") + ", " + (f != nullptr ? f->glsl : "no format qualifier") + name +
                   ")";
        }
        case SPVC_RESOURCE_TYPE_SAMPLED_IMAGE:
            return spvc_type_get_image_dimension(type) == SpvDimBuffer
                       ? "a uniform texel buffer (samplerBuffer" + name + ")"
                       : "a combined image sampler (" + image("sampler") + name + ")";
        case SPVC_RESOURCE_TYPE_SEPARATE_IMAGE:
            return spvc_type_get_image_dimension(type) == SpvDimBuffer
                       ? "a uniform texel buffer (textureBuffer" + name + ")"
                       : "a sampled image (" + image("texture") + name + ")";
        case SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS:
            return "a sampler" + in_parentheses(name);
        case SPVC_RESOURCE_TYPE_SUBPASS_INPUT:
            return "an input attachment" + in_parentheses(name);
        case SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE:
            return "an acceleration structure" + in_parentheses(name);
        default:
            return "a resource of SPIRV-Cross kind " + std::to_string(kind) + in_parentheses(name);
        }
    }

    // How many descriptors the resource takes: 1, the product of its array sizes, 0 for a
    // runtime-sized array and -1 for a size from a specialisation constant.
    long long descriptor_count(const spvc_reflected_resource& r) {
        const spvc_type type = spvc_compiler_get_type_handle(m_compiler, r.type_id);
        long long count = 1;
        for (unsigned d = 0; d < spvc_type_get_num_array_dimensions(type); ++d) {
            if (!spvc_type_array_dimension_is_literal(type, d)) {
                return -1;
            }
            const long long size = spvc_type_get_array_dimension(type, d);
            if (size == 0) {
                return 0;
            }
            // Past 2^32 the count matches no description; stop there, before it overflows.
            count = count > (1LL << 32) / size ? 1LL << 32 : count * size;
        }
        return count;
    }

    // Every descriptor the module declares, of every kind, against the description: set 0
    // alone; binding 0 one 2D storage image; bindings 1..N one storage buffer each of its size;
    // nothing else. A pipeline layout built from the description then covers the module.
    void check_bindings(spvc_resources resources, const ComputeTaskDesc& desc, Reflection& out) {
        static constexpr spvc_resource_type kinds[] = {
            SPVC_RESOURCE_TYPE_UNIFORM_BUFFER,         SPVC_RESOURCE_TYPE_STORAGE_BUFFER,
            SPVC_RESOURCE_TYPE_SUBPASS_INPUT,          SPVC_RESOURCE_TYPE_STORAGE_IMAGE,
            SPVC_RESOURCE_TYPE_SAMPLED_IMAGE,          SPVC_RESOURCE_TYPE_ATOMIC_COUNTER,
            SPVC_RESOURCE_TYPE_SEPARATE_IMAGE,         SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS,
            SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE, SPVC_RESOURCE_TYPE_SHADER_RECORD_BUFFER,
        };
        const std::size_t inputs = desc.input_bytes.size();
        for (const spvc_resource_type kind : kinds) {
            for (const auto& r : list(resources, kind)) {
                const std::uint32_t set = decoration(r.id, SpvDecorationDescriptorSet);
                const std::uint32_t binding = decoration(r.id, SpvDecorationBinding);
                const std::string what = describe(r, kind);
                const std::string where =
                    " at set " + std::to_string(set) + ", binding " + std::to_string(binding);
                if (set != 0) {
                    refuse("has " + what + where +
                               "; Tandem binds descriptor set 0 alone (the output at binding 0, "
                               "the inputs at bindings 1..N)",
                           "Move binding " + std::to_string(binding) +
                               " into set 0 and declare it in the ComputeTaskDesc, or remove "
                               "it (tandem/compute.hpp)");
                }
                const std::string says = "; the description has " + declared_at(binding, desc);
                if (binding > inputs + k_max_task_inputs) {
                    refuse("has " + what + where + says,
                           "Remove binding " + std::to_string(binding) +
                               " from the shader, or make it a storage buffer at binding " +
                               std::to_string(inputs + 1) +
                               " and give its size in ComputeTaskDesc::input_bytes, or read a "
                               "task input at bindings " +
                               std::to_string(inputs + 1) + ".. (tandem/compute.hpp)");
                }
                if (const long long count = descriptor_count(r); count != 1) {
                    refuse("has " + what + where + " as an array of " +
                               (count == 0    ? std::string("runtime size")
                                : count == -1 ? std::string("a specialisation constant's size")
                                              : std::to_string(count)) +
                               " descriptors" + says,
                           "Declare one descriptor at binding " + std::to_string(binding) +
                               " (an array inside the buffer block is fine)");
                }
                if (binding > inputs) {
                    out.task_inputs.push_back(task_input(
                        r, kind, binding, static_cast<std::uint32_t>(binding - inputs - 1),
                        what + where, says));
                    continue;
                }
                const spvc_resource_type expected = binding == 0
                                                        ? SPVC_RESOURCE_TYPE_STORAGE_IMAGE
                                                        : SPVC_RESOURCE_TYPE_STORAGE_BUFFER;
                const spvc_type base = spvc_compiler_get_type_handle(m_compiler, r.base_type_id);
                const bool right_kind =
                    kind == expected &&
                    (kind != SPVC_RESOURCE_TYPE_STORAGE_IMAGE || plain_2d(base));
                if (!right_kind) {
                    refuse("has " + what + where + says,
                           binding == 0 ? "Declare binding 0 as layout(set = 0, binding = 0, "
                                          "<format>) uniform writeonly image2D "
                                          "(tandem/compute.hpp)"
                                        : "Declare binding " + std::to_string(binding) +
                                              " as a readonly buffer block, or change "
                                              "ComputeTaskDesc::input_bytes "
                                              "(tandem/compute.hpp)");
                }
                if (kind == SPVC_RESOURCE_TYPE_STORAGE_IMAGE) {
                    out.outputs.push_back({known_format(base, what + where, says), texel_of(base)});
                } else {
                    check_input_size(r, binding, desc.input_bytes[binding - 1]);
                }
            }
        }
        std::sort(out.task_inputs.begin(), out.task_inputs.end(),
                  [](const TaskInputBinding& a, const TaskInputBinding& b) {
                      return a.binding < b.binding;
                  });
    }

    static bool plain_2d(spvc_type image) {
        return spvc_type_get_image_dimension(image) == SpvDim2D &&
               !spvc_type_get_image_arrayed(image) && !spvc_type_get_image_multisampled(image);
    }

    spvc_basetype texel_of(spvc_type image) {
        return spvc_type_get_basetype(
            spvc_compiler_get_type_handle(m_compiler, spvc_type_get_image_sampled_type(image)));
    }

    // A storage image's format qualifier (Unknown: none); refused when no Vulkan format has it.
    static SpvImageFormat known_format(spvc_type image, const std::string& what_where,
                                       const std::string& says) {
        const SpvImageFormat format = spvc_type_get_image_storage_format(image);
        if (format != SpvImageFormatUnknown && find_storage_format(format) == nullptr) {
            refuse("has " + what_where + " with SPIR-V image format " + std::to_string(format) +
                   ", which no Vulkan format matches" + says);
        }
        return format;
    }

    // A binding that reads a task input: an image (sampled, or a readonly storage image) or a
    // buffer. What the input is, the factory checks on the device (check_task_inputs).
    TaskInputBinding task_input(const spvc_reflected_resource& r, spvc_resource_type kind,
                                std::uint32_t binding, std::uint32_t input,
                                const std::string& what_where, const std::string& says) {
        const std::string b = std::to_string(binding);
        const std::string fix = "Declare binding " + b +
                                " as a sampler2D, a texture2D or a readonly image2D (an image "
                                "input), or a readonly buffer block (a buffer input) "
                                "(tandem/compute.hpp)";
        TaskInputBinding t;
        t.binding = binding;
        t.input = input;
        t.what = what_where.substr(0, what_where.rfind(" at set 0"));
        const spvc_type base = spvc_compiler_get_type_handle(m_compiler, r.base_type_id);
        switch (kind) {
        case SPVC_RESOURCE_TYPE_SAMPLED_IMAGE:
            t.kind = InputKind::CombinedSampler;
            break;
        case SPVC_RESOURCE_TYPE_SEPARATE_IMAGE:
            t.kind = InputKind::SampledImage;
            break;
        case SPVC_RESOURCE_TYPE_STORAGE_IMAGE:
            t.kind = InputKind::StorageImage;
            break;
        case SPVC_RESOURCE_TYPE_STORAGE_BUFFER:
            t.kind = InputKind::StorageBuffer;
            break;
        default:
            refuse("has " + what_where + says, fix);
        }
        if (t.kind == InputKind::StorageBuffer) {
            const spvc_type block = spvc_compiler_get_type_handle(m_compiler, r.base_type_id);
            std::size_t with_one = 0;
            spvc_compiler_get_declared_struct_size(m_compiler, block, &t.fixed);
            spvc_compiler_get_declared_struct_size_runtime_array(m_compiler, block, 1, &with_one);
            t.stride = with_one - t.fixed;
            return t;
        }
        if (!plain_2d(base)) {
            refuse("has " + what_where + says, fix);
        }
        if (t.kind != InputKind::StorageImage && spvc_type_get_image_is_depth(base)) {
            refuse("has " + what_where + ", a depth-comparison image" + says,
                   "Declare binding " + b + " as a sampler2D or a texture2D, and compare by hand");
        }
        t.texel = texel_of(base);
        if (t.kind == InputKind::StorageImage) {
            t.format = known_format(base, what_where, says);
            if (!spvc_compiler_has_decoration(m_compiler, r.id, SpvDecorationNonWritable)) {
                refuse("has " + what_where +
                           " without readonly; a task's input is read, never "
                           "written",
                       "Declare binding " + b + " readonly");
            }
        }
        return t;
    }

    void check_input_size(const spvc_reflected_resource& b, std::uint32_t binding,
                          std::size_t size) {
        spvc_type type = spvc_compiler_get_type_handle(m_compiler, b.base_type_id);
        std::size_t fixed = 0;
        std::size_t with_one = 0;
        spvc_compiler_get_declared_struct_size(m_compiler, type, &fixed);
        spvc_compiler_get_declared_struct_size_runtime_array(m_compiler, type, 1, &with_one);
        const std::size_t stride = with_one - fixed;
        const bool fits =
            stride == 0 ? size == fixed : size >= fixed && (size - fixed) % stride == 0;
        if (!fits) {
            refuse("declares input " + std::to_string(binding) + " (binding " +
                   std::to_string(binding) + ") as " + std::to_string(fixed) + " bytes" +
                   (stride == 0 ? "" : " plus elements of " + std::to_string(stride)) +
                   "; the description gives it " + std::to_string(size));
        }
    }

    spvc_context m_context = nullptr;
    spvc_compiler m_compiler = nullptr;
};

// The task's input `input` as a phrase: "image input 0 ('colour', RGBA8 64x48)".
std::string task_input_phrase(const TaskInputDesc& in, std::uint32_t input) {
    const std::string name = "input " + std::to_string(input) + " ('" + in.name + "', ";
    if (in.buffer_size > 0) {
        return "buffer " + name + std::to_string(in.buffer_size) + " bytes)";
    }
    return std::string(in.producer ? "chained " : "image ") + name +
           detail::format_name(in.format) + " " + std::to_string(in.width) + "x" +
           std::to_string(in.height) + ")";
}

// Each binding past the ComputeTaskDesc's buffers against the task's input there: the kind of
// resource, an image's texel type and storage format, a buffer's size, and what the device can
// read. Runs with check_on_device, before any Vulkan object exists.
void check_task_inputs(const WorkerContext& context, const ComputeTaskDesc& desc,
                       const Reflection& reflection) {
    const std::string task = "The compute task '" + context.task_name + "'";
    const std::size_t first = desc.input_bytes.size() + 1;
    VkPhysicalDeviceLimits limits{};
    if (context.physical_device != VK_NULL_HANDLE) {
        VkPhysicalDeviceProperties props{};
        vkGetPhysicalDeviceProperties(context.physical_device, &props);
        limits = props.limits;
    }
    for (const TaskInputBinding& t : reflection.task_inputs) {
        const std::string b = std::to_string(t.binding);
        const std::string has = task + "'s SPIR-V has " + t.what + " at set 0, binding " + b;
        if (t.input >= context.inputs.size()) {
            const std::size_t n = context.inputs.size();
            throw Error(
                ErrorCategory::InvalidArgument,
                has + "; the description has nothing there: it declares " +
                    buffers_declared(desc.input_bytes.size()) + ", and the task " +
                    (n == 0 ? std::string("no inputs (TaskDesc::inputs)") : inputs_at(n, first)),
                "Remove binding " + b +
                    " from the shader, or declare the task input it reads in "
                    "TaskDesc::inputs (tandem/compute.hpp)");
        }
        const TaskInputDesc& in = context.inputs[t.input];
        const std::string there = "; the task's " + task_input_phrase(in, t.input) + " is there";
        if (in.buffer_size > 0) {
            if (t.kind != InputKind::StorageBuffer) {
                throw Error(ErrorCategory::InvalidArgument, has + there,
                            "Declare binding " + b +
                                " as a readonly buffer block (tandem/compute.hpp)");
            }
            const bool fits = t.stride == 0 ? in.buffer_size == t.fixed
                                            : in.buffer_size >= t.fixed &&
                                                  (in.buffer_size - t.fixed) % t.stride == 0;
            if (!fits) {
                throw Error(
                    ErrorCategory::InvalidArgument,
                    has + " of " + std::to_string(t.fixed) + " bytes" +
                        (t.stride == 0 ? "" : " plus elements of " + std::to_string(t.stride)) +
                        there,
                    "Make the block's size the input's buffer_size");
            }
            if (context.physical_device != VK_NULL_HANDLE &&
                in.buffer_size > limits.maxStorageBufferRange) {
                throw Error(ErrorCategory::Unsupported,
                            has + there + ", more than " + context.device_info.name +
                                " binds as one storage buffer (" +
                                std::to_string(limits.maxStorageBufferRange) + " bytes)",
                            "Use a smaller buffer input, or place the task on another device");
            }
            continue;
        }
        if (t.kind == InputKind::StorageBuffer) {
            throw Error(ErrorCategory::InvalidArgument, has + there,
                        "Declare binding " + b +
                            " as a sampler2D, a texture2D or a readonly image2D "
                            "(tandem/compute.hpp)");
        }
        if (t.texel != texel_type(in.format)) {
            const auto texels = [](spvc_basetype type) {
                return std::string(type == SPVC_BASETYPE_UINT32  ? "uint"
                                   : type == SPVC_BASETYPE_INT32 ? "int"
                                                                 : "float") +
                       " texels";
            };
            throw Error(ErrorCategory::InvalidArgument,
                        has + ", of " + texels(t.texel) + there + ", which has " +
                            texels(texel_type(in.format)),
                        "Declare binding " + b + " with the texel type of the input's format");
        }
        if (t.kind != InputKind::StorageImage) {
            continue;
        }
        if (in.producer) {
            throw Error(ErrorCategory::InvalidArgument,
                        has + there +
                            ": a chained input is read in place, in its layout, and "
                            "cannot be bound as a storage image",
                        "Declare binding " + b + " as a sampler2D or a texture2D");
        }
        const StorageFormat* qualifier = find_storage_format(t.format);
        if (qualifier != nullptr && qualifier->vulkan != in.format) {
            throw Error(ErrorCategory::InvalidArgument, has + " (" + qualifier->glsl + ")" + there,
                        "Give binding " + b +
                            " the format qualifier of the input's format, or declare it a "
                            "sampler2D or texture2D");
        }
        if (context.physical_device == VK_NULL_HANDLE) {
            continue;
        }
        VkFormatProperties3 props3{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3};
        VkFormatProperties2 props{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2, &props3};
        vkGetPhysicalDeviceFormatProperties2(context.physical_device, in.format, &props);
        const VkFormatFeatureFlags2 features = props3.optimalTilingFeatures;
        if ((features & VK_FORMAT_FEATURE_2_STORAGE_IMAGE_BIT) == 0 ||
            (qualifier == nullptr &&
             (features & VK_FORMAT_FEATURE_2_STORAGE_READ_WITHOUT_FORMAT_BIT) == 0)) {
            throw Error(ErrorCategory::Unsupported,
                        has + there + ", and " + context.device_info.name + " cannot read " +
                            detail::format_name(in.format) + " as a storage image" +
                            (qualifier == nullptr ? " without a format qualifier" : ""),
                        "Declare binding " + b + " as a sampler2D or a texture2D");
        }
    }
}

// What only the device and the task can tell: the output format against the module's image,
// and the device's limits against the workgroup and push constants. Runs when the workload is
// made (registration, or a move), before any Vulkan object exists.
void check_on_device(const WorkerContext& context, const ComputeTaskDesc& desc,
                     const Reflection& reflection) {
    check_task_inputs(context, desc, reflection);
    const std::string task = "The compute task '" + context.task_name + "'";
    for (const OutputImage& image : reflection.outputs) {
        const StorageFormat* qualifier = find_storage_format(image.format);
        if (qualifier != nullptr && qualifier->vulkan != context.format) {
            throw Error(ErrorCategory::InvalidArgument,
                        task + "'s SPIR-V declares its output (set 0, binding 0) as a " +
                            qualifier->glsl + " storage image; the task's output has format " +
                            detail::format_name(context.format),
                        "Give the image the format qualifier of TaskDesc::format, or none "
                        "(tandem/compute.hpp)");
        }
        if (image.texel != texel_type(context.format)) {
            throw Error(ErrorCategory::InvalidArgument,
                        task + "'s SPIR-V declares its output (set 0, binding 0) as " +
                            texel_type_name(image.texel) + "; the task's output format " +
                            detail::format_name(context.format) + " needs " +
                            texel_type_name(texel_type(context.format)),
                        "Declare the output image with the texel type of TaskDesc::format");
        }
        if (qualifier == nullptr && context.physical_device != VK_NULL_HANDLE) {
            // Without a format qualifier the device must write the format unformatted.
            VkFormatProperties3 props3{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3};
            VkFormatProperties2 props{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2, &props3};
            vkGetPhysicalDeviceFormatProperties2(context.physical_device, context.format, &props);
            if ((props3.optimalTilingFeatures &
                 VK_FORMAT_FEATURE_2_STORAGE_WRITE_WITHOUT_FORMAT_BIT) == 0) {
                throw Error(ErrorCategory::Unsupported,
                            task +
                                "'s SPIR-V declares its output (set 0, binding 0) with no "
                                "format qualifier, and " +
                                context.device_info.name + " cannot write " +
                                detail::format_name(context.format) + " images without one",
                            "Give the image the format qualifier of TaskDesc::format");
            }
        }
    }
    if (context.physical_device == VK_NULL_HANDLE) {
        return; // a context without one: the driver's own checks stand
    }
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(context.physical_device, &props);
    const VkPhysicalDeviceLimits& limits = props.limits;
    const auto& local = reflection.local_size;
    if (local[0] > limits.maxComputeWorkGroupSize[0] ||
        local[1] > limits.maxComputeWorkGroupSize[1] ||
        std::uint64_t{local[0]} * local[1] > limits.maxComputeWorkGroupInvocations) {
        throw Error(ErrorCategory::Unsupported,
                    task + "'s workgroup of " + std::to_string(local[0]) + "x" +
                        std::to_string(local[1]) + " exceeds " + context.device_info.name +
                        "'s limits (" + std::to_string(limits.maxComputeWorkGroupSize[0]) + "x" +
                        std::to_string(limits.maxComputeWorkGroupSize[1]) + ", " +
                        std::to_string(limits.maxComputeWorkGroupInvocations) + " invocations)",
                    "Use a smaller LocalSize, or place the task on another device");
    }
    if (desc.push_constant_bytes > limits.maxPushConstantsSize) {
        throw Error(ErrorCategory::Unsupported,
                    task + " pushes " + std::to_string(desc.push_constant_bytes) +
                        " bytes of constants; " + context.device_info.name + " takes at most " +
                        std::to_string(limits.maxPushConstantsSize),
                    "Move the rest into an input buffer (ComputeTaskDesc::input_bytes)");
    }
}

void check_vk(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw Error(r, std::string(what) + " for the compute task",
                    "Check the device with `tandem devices`");
    }
}

VkDescriptorType descriptor_type(InputKind kind) {
    switch (kind) {
    case InputKind::CombinedSampler:
        return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    case InputKind::SampledImage:
        return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    case InputKind::StorageImage:
        return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    case InputKind::StorageBuffer:
        return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    }
    return VK_DESCRIPTOR_TYPE_MAX_ENUM;
}

// The module's pipeline on one device, with one descriptor set and one set of input buffers
// per slot (and, for each input read as a storage image, one image the job copies it into).
// Raw Vulkan over the public WorkerContext, destroyed in reverse.
class ComputeWorkload final : public Workload {
public:
    ComputeWorkload(const WorkerContext& context, const ComputeTaskDesc& desc,
                    const Reflection& reflection)
        : m_device(context.device), m_runtime_device(detail::application_device(context.device)),
          m_desc(desc), m_local(reflection.local_size), m_slots(context.slots),
          m_task_inputs(reflection.task_inputs), m_input_count(context.inputs.size()) {
        try {
            build(context);
        } catch (...) {
            destroy();
            throw;
        }
    }
    ~ComputeWorkload() override { destroy(); }

    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_STORAGE_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
    }

    std::string check(std::span<const std::byte> bytes) const override {
        std::size_t expected = m_desc.push_constant_bytes;
        for (std::uint32_t b : m_desc.input_bytes) {
            expected += b;
        }
        if (bytes.size() == expected) {
            return {};
        }
        return "a job of the compute task submitted " + std::to_string(bytes.size()) +
               " bytes; it takes " + std::to_string(m_desc.push_constant_bytes) +
               " push-constant bytes and its inputs, " + std::to_string(expected) + " in all";
    }

    void record(const RecordContext& job) override {
        // submit() checked the bytes already; a trial job replays checked bytes too.
        if (std::string why = check(job.bytes); !why.empty()) {
            throw std::invalid_argument(why);
        }
        // The slot's previous job completed (Tandem records a slot again only then), so its
        // buffers and descriptor set are free. Host writes before the submit are visible to it.
        std::size_t offset = m_desc.push_constant_bytes;
        for (std::size_t i = 0; i < m_desc.input_bytes.size(); ++i) {
            std::memcpy(m_mapped[job.slot][i], job.bytes.data() + offset, m_desc.input_bytes[i]);
            offset += m_desc.input_bytes[i];
        }
        if (job.inputs.size() != m_input_count) {
            throw std::invalid_argument("a job of the compute task came with " +
                                        std::to_string(job.inputs.size()) +
                                        " inputs; its task has " + std::to_string(m_input_count));
        }
        bind(job);

        // Every texel is written: the old contents (UNDEFINED) are not needed.
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
        copy_storage_inputs(job);
        vkCmdBindPipeline(job.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline);
        vkCmdBindDescriptorSets(job.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_layout, 0, 1,
                                &m_sets[job.slot], 0, nullptr);
        if (m_desc.push_constant_bytes > 0) {
            vkCmdPushConstants(job.cmd, m_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                               m_desc.push_constant_bytes, job.bytes.data());
        }
        vkCmdDispatch(job.cmd, (job.extent.width + m_local[0] - 1) / m_local[0],
                      (job.extent.height + m_local[1] - 1) / m_local[1], 1);
    }

private:
    struct OwnImage {
        VkImage image = VK_NULL_HANDLE;
        VkDeviceMemory memory = VK_NULL_HANDLE;
        VkImageView view = VK_NULL_HANDLE;
        VkExtent2D extent{};
    };

    // Points the slot's set at this job's output and inputs. The slot's previous job completed
    // (tandem/workload.hpp), so its set is free; every job writes it again, since a chained
    // input's view is the producer's slot of the day.
    void bind(const RecordContext& job) {
        constexpr std::size_t n = 1 + k_max_task_inputs;
        std::array<VkDescriptorImageInfo, n> images{};
        std::array<VkDescriptorBufferInfo, n> buffers{};
        std::array<VkWriteDescriptorSet, n> writes{};
        images[0] = {VK_NULL_HANDLE, job.view, VK_IMAGE_LAYOUT_GENERAL};
        writes[0] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[0].dstBinding = 0;
        writes[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        writes[0].pImageInfo = &images[0];
        std::size_t copy = 0;
        for (std::size_t i = 0; i < m_task_inputs.size(); ++i) {
            const TaskInputBinding& t = m_task_inputs[i];
            const JobInput& in = job.inputs[t.input];
            VkWriteDescriptorSet& w = writes[i + 1];
            w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            w.dstBinding = t.binding;
            w.descriptorType = descriptor_type(t.kind);
            if (t.kind == InputKind::StorageBuffer) {
                if (in.buffer == VK_NULL_HANDLE) {
                    throw std::invalid_argument("a job of the compute task has no buffer for its "
                                                "input " +
                                                std::to_string(t.input));
                }
                buffers[i + 1] = {in.buffer, 0, in.size};
                w.pBufferInfo = &buffers[i + 1];
                continue;
            }
            if (in.view == VK_NULL_HANDLE) {
                throw std::invalid_argument("a job of the compute task has no image for its "
                                            "input " +
                                            std::to_string(t.input));
            }
            images[i + 1] =
                t.kind == InputKind::StorageImage
                    ? VkDescriptorImageInfo{VK_NULL_HANDLE, m_copies[job.slot][copy++].view,
                                            VK_IMAGE_LAYOUT_GENERAL}
                    : VkDescriptorImageInfo{t.kind == InputKind::CombinedSampler ? m_sampler
                                                                                 : VK_NULL_HANDLE,
                                            in.view, in.layout};
            w.pImageInfo = &images[i + 1];
        }
        const std::size_t count = 1 + m_task_inputs.size();
        for (std::size_t i = 0; i < count; ++i) {
            writes[i].dstSet = m_sets[job.slot];
            writes[i].descriptorCount = 1;
        }
        vkUpdateDescriptorSets(m_device, static_cast<std::uint32_t>(count), writes.data(), 0,
                               nullptr);
    }

    // Tandem's input images are made for sampling: an input the module reads with imageLoad is
    // copied into the slot's own storage image first, the input left in the layout it arrived
    // in. Sampled inputs need nothing here: they are readable from the job's first stage.
    void copy_storage_inputs(const RecordContext& job) {
        std::size_t copy = 0;
        for (const TaskInputBinding& t : m_task_inputs) {
            if (t.kind != InputKind::StorageImage) {
                continue;
            }
            const JobInput& in = job.inputs[t.input];
            const OwnImage& own = m_copies[job.slot][copy++];
            if (in.extent.width != own.extent.width || in.extent.height != own.extent.height) {
                throw std::invalid_argument("a job of the compute task has input " +
                                            std::to_string(t.input) + " of another size");
            }
            // The slot's last dispatch read the copy: done before it is written again.
            detail::image_barrier(job.cmd, own.image, VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            const VkImageLayout source = in.layout == VK_IMAGE_LAYOUT_GENERAL
                                             ? VK_IMAGE_LAYOUT_GENERAL
                                             : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
            if (source != in.layout) {
                detail::image_barrier(job.cmd, in.image, in.layout, source,
                                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
            }
            detail::copy_whole_image(job.cmd, in.image, source, own.image,
                                     VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, in.extent);
            if (source != in.layout) {
                detail::image_barrier(job.cmd, in.image, source, in.layout,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
            }
            detail::image_barrier(
                job.cmd, own.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL,
                VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
        }
    }

    // The module, layouts and pipeline: made here, or (inside a runtime) shared with every task
    // instance on the device that runs the same code (core/pipeline_shelf.hpp).
    detail::PipelineObjects build_pipeline(const std::string& name) const {
        const VkDevice dev = m_device;
        detail::PipelineObjects out;
        VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        mi.codeSize = m_desc.spirv.size() * sizeof(std::uint32_t);
        mi.pCode = m_desc.spirv.data();
        VkShaderModule module = VK_NULL_HANDLE;
        check_vk(vkCreateShaderModule(dev, &mi, nullptr, &module), "vkCreateShaderModule");
        const detail::Handle<VkShaderModule> module_owner(
            module, [dev](VkShaderModule m) { vkDestroyShaderModule(dev, m, nullptr); });

        std::vector<VkDescriptorSetLayoutBinding> bindings;
        bindings.push_back(
            {0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        for (std::uint32_t i = 0; i < m_desc.input_bytes.size(); ++i) {
            bindings.push_back({i + 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        }
        // The sampler is written with each descriptor, not immutable: the layout is shared
        // between task instances (pipeline_key), the sampler is this one's.
        for (const TaskInputBinding& t : m_task_inputs) {
            bindings.push_back(
                {t.binding, descriptor_type(t.kind), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        }
        VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        li.bindingCount = static_cast<std::uint32_t>(bindings.size());
        li.pBindings = bindings.data();
        VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
        check_vk(vkCreateDescriptorSetLayout(dev, &li, nullptr, &set_layout),
                 "vkCreateDescriptorSetLayout");
        out.set_layout =
            detail::Handle<VkDescriptorSetLayout>(set_layout, [dev](VkDescriptorSetLayout l) {
                vkDestroyDescriptorSetLayout(dev, l, nullptr);
            });
        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, m_desc.push_constant_bytes};
        VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        pli.setLayoutCount = 1;
        pli.pSetLayouts = &set_layout;
        pli.pushConstantRangeCount = m_desc.push_constant_bytes > 0 ? 1 : 0;
        pli.pPushConstantRanges = &range;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        check_vk(vkCreatePipelineLayout(dev, &pli, nullptr, &layout), "vkCreatePipelineLayout");
        out.layout = detail::Handle<VkPipelineLayout>(
            layout, [dev](VkPipelineLayout l) { vkDestroyPipelineLayout(dev, l, nullptr); });
        VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        ci.stage.module = module;
        ci.stage.pName = m_desc.entry_point.c_str();
        ci.layout = layout;
        VkPipeline pipeline = VK_NULL_HANDLE;
        check_vk(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline),
                 "vkCreateComputePipelines");
        out.pipeline = detail::Handle<VkPipeline>(
            pipeline, [dev](VkPipeline p) { vkDestroyPipeline(dev, p, nullptr); });
        if (m_runtime_device != nullptr) {
            m_runtime_device->name(pipeline, VK_OBJECT_TYPE_PIPELINE, name);
        }
        return out;
    }

    // What makes two of these pipelines different: the code, its entry point and its layout.
    [[nodiscard]] std::string pipeline_key() const {
        std::string key = "compute " + m_desc.entry_point + " " +
                          std::to_string(m_desc.push_constant_bytes) + " " +
                          std::to_string(m_desc.input_bytes.size()) + " ";
        const auto* code = reinterpret_cast<const char*>(m_desc.spirv.data());
        key.append(code, m_desc.spirv.size() * sizeof(std::uint32_t));
        return key;
    }

    void build(const WorkerContext& context) {
        const std::string name = context.task_name + " compute pipeline";
        if (m_runtime_device != nullptr) {
            m_shared = m_runtime_device->pipelines().get(
                pipeline_key(), [this, &name] { return build_pipeline(name); });
            m_set_layout = m_shared.set_layout();
            m_layout = m_shared.layout();
            m_pipeline = m_shared.pipeline();
        } else {
            m_own = build_pipeline(name);
            m_set_layout = m_own.set_layout.get();
            m_layout = m_own.layout.get();
            m_pipeline = m_own.pipeline.get();
        }

        const std::uint32_t inputs = static_cast<std::uint32_t>(m_desc.input_bytes.size());
        std::vector<VkDescriptorPoolSize> sizes{{VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, m_slots}};
        if (inputs > 0) {
            sizes.push_back({VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, m_slots * inputs});
        }
        for (const TaskInputBinding& t : m_task_inputs) {
            sizes.push_back({descriptor_type(t.kind), m_slots});
        }
        VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpi.maxSets = m_slots;
        dpi.poolSizeCount = static_cast<std::uint32_t>(sizes.size());
        dpi.pPoolSizes = sizes.data();
        check_vk(vkCreateDescriptorPool(m_device, &dpi, nullptr, &m_pool),
                 "vkCreateDescriptorPool");
        m_sets.resize(m_slots);
        std::vector<VkDescriptorSetLayout> layouts(m_slots, m_set_layout);
        VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool = m_pool;
        ai.descriptorSetCount = m_slots;
        ai.pSetLayouts = layouts.data();
        check_vk(vkAllocateDescriptorSets(m_device, &ai, m_sets.data()),
                 "vkAllocateDescriptorSets");

        m_mapped.assign(m_slots, std::vector<void*>(inputs, nullptr));
        for (std::uint32_t s = 0; s < m_slots; ++s) {
            for (std::uint32_t i = 0; i < inputs; ++i) {
                add_input(context, s, i);
            }
        }
        build_task_inputs(context);
    }

    // Nearest, clamp to edge: exact texels wherever the module samples (any input format can
    // be sampled so, where linear filtering of R32F, say, is optional), edges repeated.
    void build_task_inputs(const WorkerContext& context) {
        const auto has = [this](InputKind kind) {
            return std::any_of(m_task_inputs.begin(), m_task_inputs.end(),
                               [kind](const TaskInputBinding& t) { return t.kind == kind; });
        };
        if (has(InputKind::CombinedSampler)) {
            VkSamplerCreateInfo si{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
            si.magFilter = VK_FILTER_NEAREST;
            si.minFilter = VK_FILTER_NEAREST;
            si.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
            si.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
            si.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
            si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
            si.maxLod = 0.0f;
            check_vk(vkCreateSampler(m_device, &si, nullptr, &m_sampler), "vkCreateSampler");
            name(VK_OBJECT_TYPE_SAMPLER, m_sampler, context, context.task_name + " input sampler");
        }
        m_copies.resize(m_slots);
        for (std::uint32_t s = 0; s < m_slots; ++s) {
            for (const TaskInputBinding& t : m_task_inputs) {
                if (t.kind == InputKind::StorageImage) {
                    m_copies[s].push_back({});
                    add_copy(context, context.inputs[t.input], s, m_copies[s].back());
                }
            }
        }
    }

    template <typename T>
    static void name(VkObjectType type, T handle, const WorkerContext& context,
                     const std::string& what) {
        if (context.set_name) {
            context.set_name(type, reinterpret_cast<std::uint64_t>(handle), what);
        }
    }

    // The slot's image an input read with imageLoad is copied into: the input's format and size.
    void add_copy(const WorkerContext& context, const TaskInputDesc& in, std::uint32_t slot,
                  OwnImage& own) {
        own.extent = {in.width, in.height};
        VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        ii.imageType = VK_IMAGE_TYPE_2D;
        ii.format = in.format;
        ii.extent = {in.width, in.height, 1};
        ii.mipLevels = 1;
        ii.arrayLayers = 1;
        ii.samples = VK_SAMPLE_COUNT_1_BIT;
        ii.tiling = VK_IMAGE_TILING_OPTIMAL;
        ii.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        ii.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        check_vk(vkCreateImage(m_device, &ii, nullptr, &own.image), "vkCreateImage");
        VkMemoryRequirements req;
        vkGetImageMemoryRequirements(m_device, own.image, &req);
        const auto type =
            context.find_memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (!type) {
            throw Error(ErrorCategory::Unsupported,
                        "The device has no memory for a copy of the compute task's input '" +
                            in.name + "'",
                        "Place the task on another device");
        }
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = req.size;
        mai.memoryTypeIndex = *type;
        check_vk(vkAllocateMemory(m_device, &mai, nullptr, &own.memory), "vkAllocateMemory");
        check_vk(vkBindImageMemory(m_device, own.image, own.memory, 0), "vkBindImageMemory");
        VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        vi.image = own.image;
        vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
        vi.format = in.format;
        vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        check_vk(vkCreateImageView(m_device, &vi, nullptr, &own.view), "vkCreateImageView");
        name(VK_OBJECT_TYPE_IMAGE, own.image, context,
             context.task_name + " input " + in.name + " copy slot " + std::to_string(slot));
    }

    // The slot's input buffer: host-visible and coherent, device-local where the device has
    // such memory. Inside a runtime, a range of the device's memory pool.
    void add_input(const WorkerContext& context, std::uint32_t slot, std::uint32_t input) {
        const VkDeviceSize size = std::max<VkDeviceSize>(m_desc.input_bytes[input], 4);
        const VkMemoryPropertyFlags required =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const char* no_memory = "The device has no host-visible coherent memory for compute inputs";
        VkBuffer buffer = VK_NULL_HANDLE;
        if (m_runtime_device != nullptr) {
            try {
                m_pooled.push_back(detail::create_buffer(
                    *m_runtime_device,
                    {size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, required,
                     VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, context.task_name + " compute input"}));
            } catch (const Error& e) {
                // Its what() names the result already: the category alone is carried over.
                throw Error(e.category(), std::string(no_memory) + ": " + e.what(),
                            "Place the task on another device");
            }
            buffer = m_pooled.back().get();
            m_mapped[slot][input] = m_pooled.back().mapped;
        } else {
            VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
            bi.size = size;
            bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
            check_vk(vkCreateBuffer(m_device, &bi, nullptr, &buffer), "vkCreateBuffer");
            m_buffers.push_back(buffer);
            VkMemoryRequirements req;
            vkGetBufferMemoryRequirements(m_device, buffer, &req);
            const auto type = context.find_memory_type(req.memoryTypeBits, required,
                                                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
            if (!type) {
                throw Error(ErrorCategory::Unsupported, no_memory,
                            "Place the task on another device");
            }
            VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            mai.allocationSize = req.size;
            mai.memoryTypeIndex = *type;
            VkDeviceMemory memory = VK_NULL_HANDLE;
            check_vk(vkAllocateMemory(m_device, &mai, nullptr, &memory), "vkAllocateMemory");
            m_memory.push_back(memory);
            check_vk(vkBindBufferMemory(m_device, buffer, memory, 0), "vkBindBufferMemory");
            check_vk(vkMapMemory(m_device, memory, 0, VK_WHOLE_SIZE, 0, &m_mapped[slot][input]),
                     "vkMapMemory");
        }
        VkDescriptorBufferInfo info{buffer, 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = m_sets[slot];
        write.dstBinding = input + 1;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = &info;
        vkUpdateDescriptorSets(m_device, 1, &write, 0, nullptr);
    }

    void destroy() noexcept {
        for (auto& slot : m_copies) {
            for (OwnImage& own : slot) {
                vkDestroyImageView(m_device, own.view, nullptr);
                vkDestroyImage(m_device, own.image, nullptr);
                vkFreeMemory(m_device, own.memory, nullptr);
            }
        }
        m_copies.clear();
        vkDestroySampler(m_device, m_sampler, nullptr);
        m_sampler = VK_NULL_HANDLE;
        m_pooled.clear();
        for (VkBuffer b : m_buffers) {
            vkDestroyBuffer(m_device, b, nullptr);
        }
        for (VkDeviceMemory m : m_memory) {
            vkFreeMemory(m_device, m, nullptr); // unmaps
        }
        m_buffers.clear();
        m_memory.clear();
        vkDestroyDescriptorPool(m_device, m_pool, nullptr);
        m_pool = VK_NULL_HANDLE;
        m_shared.reset();
        m_own = {};
        m_pipeline = VK_NULL_HANDLE;
        m_layout = VK_NULL_HANDLE;
        m_set_layout = VK_NULL_HANDLE;
    }

    VkDevice m_device;
    // The runtime's Device behind m_device (its memory pool and pipeline shelf); null when the
    // factory is called outside a runtime.
    const detail::Device* m_runtime_device;
    ComputeTaskDesc m_desc;
    std::array<std::uint32_t, 3> m_local;
    std::uint32_t m_slots;
    detail::PipelineShelf::Shared m_shared; // inside a runtime
    detail::PipelineObjects m_own;          // outside one
    VkDescriptorSetLayout m_set_layout = VK_NULL_HANDLE;
    VkPipelineLayout m_layout = VK_NULL_HANDLE;
    VkPipeline m_pipeline = VK_NULL_HANDLE;
    VkDescriptorPool m_pool = VK_NULL_HANDLE;
    std::vector<VkDescriptorSet> m_sets;
    std::vector<detail::Buffer> m_pooled; // inside a runtime
    std::vector<VkBuffer> m_buffers;      // outside one, with their memory
    std::vector<VkDeviceMemory> m_memory;
    std::vector<std::vector<void*>> m_mapped;    // [slot][input]
    std::vector<TaskInputBinding> m_task_inputs; // the module's bindings of TaskDesc::inputs
    std::size_t m_input_count;                   // TaskDesc::inputs
    VkSampler m_sampler = VK_NULL_HANDLE;        // for sampler2D inputs
    std::vector<std::vector<OwnImage>> m_copies; // [slot][storage-image input, in binding order]
};

// SPIRV-Cross's C API lets some of its C++ exceptions through (an execution mode argument that
// is not a constant: "Bad cast"), even for a module SPIRV-Tools accepted; they are refusals too.
Reflection reflect(const ComputeTaskDesc& desc) {
    try {
        return Reflector(desc.spirv).check(desc);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        refuse(std::string("cannot be reflected (SPIRV-Cross: ") + e.what() + ")");
    }
}

} // namespace

WorkloadFactory compute_workload(const ComputeTaskDesc& desc) {
    validate(desc.spirv);
    const Reflection reflection = reflect(desc);
    return [desc, reflection](const WorkerContext& context) -> std::unique_ptr<Workload> {
        check_on_device(context, desc, reflection);
        return std::make_unique<ComputeWorkload>(context, desc, reflection);
    };
}

} // namespace tandem
