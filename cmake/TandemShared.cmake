# libtandem.so (TANDEM_SHARED): the installed product. It links the objects of the layers behind
# the public API once more, into one shared library; everything in them is hidden
# (-fvisibility=hidden) but what include/tandem/ marks TANDEM_API (tandem/export.hpp), and
# tandem.map keeps the dynamic symbol table to namespace tandem (instantiations of std's or a
# dependency's templates stay local). Every dependency is linked privately: an application needs
# Vulkan alone. The layers themselves stay static libraries for Tandem's tests, CLI and
# benchmarks, which use internals.
#
# GNUInstallDirs first: the installed interface below names CMAKE_INSTALL_INCLUDEDIR, which is
# empty in a fresh build folder until GNUInstallDirs sets it.
include(GNUInstallDirs)

# The layers the package holds, bottom-up (the static package installs the same ones).
set(tandem_package_layers core sync transfer sched scene render workloads compute capture post
    post_tasks runtime readback trace)

# The SONAME follows the package's compatibility rule (tandem/version.hpp): while the major
# version is 0 each minor version is its own ABI (libtandem.so.0.1); from 1.0 on, each major one.
if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(tandem_soversion ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
    set(tandem_soversion ${PROJECT_VERSION_MAJOR})
endif()

if(TANDEM_SHARED)
    set(tandem_objects $<TARGET_OBJECTS:tandem_shaders> $<TARGET_OBJECTS:tandem_tinygltf>)
    set(tandem_layer_targets)
    foreach(layer IN LISTS tandem_package_layers)
        list(APPEND tandem_objects $<TARGET_OBJECTS:tandem_${layer}>)
        list(APPEND tandem_layer_targets tandem_${layer})
    endforeach()
    add_library(tandem_shared SHARED ${tandem_objects})
    add_library(tandem::shared ALIAS tandem_shared)
    # The layers' own dependencies come with the layers, privately and in the build tree only
    # (their archives add no object: each is in already). Vulkan is the public interface's.
    target_link_libraries(tandem_shared
        PUBLIC Vulkan::Vulkan
        PRIVATE $<BUILD_INTERFACE:${tandem_layer_targets}>)
    target_include_directories(tandem_shared INTERFACE
        $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
        $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    set(tandem_map ${PROJECT_SOURCE_DIR}/cmake/tandem.map)
    target_link_options(tandem_shared PRIVATE -Wl,--version-script=${tandem_map})
    # Every symbol the library needs is defined in it or in a library it names (a sanitizer's
    # runtime is the executable's, so not with sanitizers).
    if(TANDEM_SANITIZE STREQUAL "" AND NOT TANDEM_BUILD_FUZZERS)
        target_link_options(tandem_shared PRIVATE -Wl,--no-undefined)
    endif()
    set_target_properties(tandem_shared PROPERTIES
        OUTPUT_NAME tandem
        EXPORT_NAME tandem
        VERSION ${PROJECT_VERSION}
        SOVERSION ${tandem_soversion}
        LINK_DEPENDS ${tandem_map})
endif()
