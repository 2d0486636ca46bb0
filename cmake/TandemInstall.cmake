# Installation: headers under include/tandem, the layer libraries, the `tandem` CLI, and a CMake
# package (tandemConfig.cmake) so that an application writes
#     find_package(tandem REQUIRED)
#     target_link_libraries(app PRIVATE tandem::tandem)
# tandem::tandem is an INTERFACE target linking every installed layer.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(tandem_all INTERFACE)
set_target_properties(tandem_all PROPERTIES EXPORT_NAME tandem)
add_library(tandem::tandem ALIAS tandem_all)

set(tandem_installed_targets tandem_shaders tandem_all)
foreach(layer core sync transfer sched scene render workloads compute capture runtime readback
        trace)
    if(TARGET tandem_${layer})
        list(APPEND tandem_installed_targets tandem_${layer})
        target_link_libraries(tandem_all INTERFACE tandem_${layer})
    endif()
endforeach()
target_include_directories(tandem_all INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

install(TARGETS ${tandem_installed_targets} EXPORT tandemTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tandem RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tandem
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(EXPORT tandemTargets NAMESPACE tandem::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tandemConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/tandemConfig.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tandemConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tandemConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tandemConfigVersion.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tandem)
