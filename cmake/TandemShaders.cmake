# tandem_add_shaders(TARGET name SOURCES a.comp b.vert ...)
# Compiles GLSL to SPIR-V with glslc and embeds each module in a static library as
# `std::span<const uint32_t> tandem::shaders::<file_stem>_<stage>()`, declared in
# <shaders/embedded.hpp>.
find_program(GLSLC glslc REQUIRED)

function(tandem_add_shaders)
    cmake_parse_arguments(ARG "" "TARGET" "SOURCES" ${ARGN})
    set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
    set(generated)
    set(decls "")
    foreach(src ${ARG_SOURCES})
        get_filename_component(stem ${src} NAME_WE)
        get_filename_component(ext ${src} EXT)
        string(SUBSTRING ${ext} 1 -1 stage)
        set(sym "${stem}_${stage}")
        set(spv ${out_dir}/${sym}.spv)
        set(cpp ${out_dir}/${sym}.cpp)
        add_custom_command(OUTPUT ${spv}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
            COMMAND ${GLSLC} --target-env=vulkan1.3 -O -Werror
                    -I ${CMAKE_CURRENT_SOURCE_DIR} -MD -MF ${spv}.d
                    -o ${spv} ${CMAKE_CURRENT_SOURCE_DIR}/${src}
            DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${src}
            DEPFILE ${spv}.d
            COMMENT "glslc ${src}")
        add_custom_command(OUTPUT ${cpp}
            COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DOUT=${cpp} -DSYM=${sym}
                    -P ${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake
            DEPENDS ${spv} ${PROJECT_SOURCE_DIR}/cmake/EmbedSpirv.cmake)
        list(APPEND generated ${cpp})
        string(APPEND decls "std::span<const std::uint32_t> ${sym}();\n")
    endforeach()
    file(WRITE ${out_dir}/shaders/embedded.hpp.in
        "// Generated: SPIR-V modules compiled from shaders/ at build time.\n#pragma once\n#include <cstdint>\n#include <span>\nnamespace tandem::shaders {\n${decls}} // namespace tandem::shaders\n")
    configure_file(${out_dir}/shaders/embedded.hpp.in ${out_dir}/shaders/embedded.hpp COPYONLY)
    add_library(${ARG_TARGET} STATIC ${generated})
    add_library(tandem::shaders ALIAS ${ARG_TARGET})
    set_target_properties(${ARG_TARGET} PROPERTIES EXPORT_NAME shaders)
    target_include_directories(${ARG_TARGET} PUBLIC $<BUILD_INTERFACE:${out_dir}>)
endfunction()
