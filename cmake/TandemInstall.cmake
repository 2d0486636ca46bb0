# Installation: the public headers, the `tandem` CLI and a CMake package, so that an application
# writes
#     find_package(tandem 0.1 REQUIRED)
#     target_link_libraries(app PRIVATE tandem::tandem)
# TANDEM_SHARED (the default): tandem::tandem is libtandem.so (TandemShared.cmake), and the
# package finds Vulkan alone; a tandem.pc serves pkg-config. TANDEM_SHARED=OFF: tandem::tandem is
# an INTERFACE target over the static layer libraries, and the package finds their dependencies.
# A shared build installs the static package too on request, as component `static-package`
# (`cmake --install build --component static-package`; a plain install leaves it out), so that
# one build can check both (tests/install).
# The compatibility rule (tandemConfigVersion.cmake, and the SONAME): while the major version is
# 0, a package satisfies requests for its own major.minor version only (SameMinorVersion); from
# 1.0 on, for its major version (SameMajorVersion).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(tandem_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(tandem_compatibility SameMinorVersion)
else()
    set(tandem_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/package/tandemConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY ${tandem_compatibility})

# tandem_install_package(shared|static COMPONENT name [EXCLUDE_FROM_ALL])
# The headers, the library or libraries, and tandemConfig.cmake with its targets and version
# file, as one install component.
function(tandem_install_package kind)
    cmake_parse_arguments(ARG "EXCLUDE_FROM_ALL" "COMPONENT" "" ${ARGN})
    set(exclude)
    if(ARG_EXCLUDE_FROM_ALL)
        set(exclude EXCLUDE_FROM_ALL)
    endif()
    set(component COMPONENT ${ARG_COMPONENT} ${exclude})
    if(kind STREQUAL "shared")
        install(TARGETS tandem_shared EXPORT tandem-shared-targets
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ${component})
        set(TANDEM_PACKAGE_DEPENDENCIES "find_dependency(Vulkan 1.3)")
        set(TANDEM_PACKAGE_NOTE "tandem::tandem is libtandem.so, which links its own
# dependencies privately: an application needs Vulkan alone.")
    else()
        install(TARGETS tandem_shaders tandem_all ${tandem_static_layers}
            EXPORT tandem-static-targets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} ${component})
        string(JOIN "\n" TANDEM_PACKAGE_DEPENDENCIES
            "find_dependency(Vulkan 1.3)"
            "find_dependency(fmt)"
            "find_dependency(glm)"
            "find_dependency(nlohmann_json 3)"
            "find_dependency(Threads)"
            "find_dependency(SPIRV-Tools)"
            "find_dependency(spirv_cross_c_shared)")
        set(TANDEM_PACKAGE_NOTE "tandem::tandem links the static layer libraries, whose
# dependencies the application's build finds here as well.")
    endif()
    set(TANDEM_PACKAGE_KIND ${kind})
    set(TANDEM_PACKAGE_TARGETS tandem-${kind}-targets.cmake)
    install(EXPORT tandem-${kind}-targets NAMESPACE tandem:: DESTINATION ${tandem_cmake_dir}
        FILE tandem-${kind}-targets.cmake ${component})
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/package/${kind})
    configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tandemConfig.cmake.in
        ${dir}/tandemConfig.cmake INSTALL_DESTINATION ${tandem_cmake_dir})
    install(FILES ${dir}/tandemConfig.cmake
                  ${CMAKE_CURRENT_BINARY_DIR}/package/tandemConfigVersion.cmake
        DESTINATION ${tandem_cmake_dir} ${component})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tandem
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${component} FILES_MATCHING PATTERN "*.hpp")
endfunction()

# The static package's tandem::tandem: every installed layer.
add_library(tandem_all INTERFACE)
set_target_properties(tandem_all PROPERTIES EXPORT_NAME tandem)
set(tandem_static_layers)
foreach(layer IN LISTS tandem_package_layers)
    list(APPEND tandem_static_layers tandem_${layer})
    target_link_libraries(tandem_all INTERFACE tandem_${layer})
endforeach()
target_include_directories(tandem_all INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

if(TANDEM_SHARED)
    add_library(tandem::tandem ALIAS tandem_shared)
    tandem_install_package(shared COMPONENT package)
    tandem_install_package(static COMPONENT static-package EXCLUDE_FROM_ALL)
    # pkg-config: the prefix is found from the .pc file's own place, so that the installed tree
    # can move (the install test installs into a temporary prefix).
    file(RELATIVE_PATH tandem_pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
    configure_file(${PROJECT_SOURCE_DIR}/cmake/tandem.pc.in
        ${CMAKE_CURRENT_BINARY_DIR}/package/tandem.pc @ONLY)
    install(FILES ${CMAKE_CURRENT_BINARY_DIR}/package/tandem.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT package)
else()
    add_library(tandem::tandem ALIAS tandem_all)
    tandem_install_package(static COMPONENT package)
endif()
install(TARGETS tandem RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT package)
