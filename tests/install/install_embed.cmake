# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DSHARED=ON|OFF
#       -DCXX=<c++ compiler> -DREADELF=<readelf> -P install_embed.cmake
# SHARED (a TANDEM_SHARED build): the shared package, with the examples configured where
# Tandem's own dependencies cannot be found, and a program built with pkg-config; then the static
# package from the same build (component static-package). Otherwise the static package alone.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "failed (${rc}): ${ARGN}")
    endif()
endfunction()

# The installed headers are the public API alone: each includes only the standard library,
# Vulkan's core header and other tandem/ headers (no glm, nothing from src/); tandem.hpp
# includes every other one.
function(check_headers prefix)
    file(GLOB installed_headers ${prefix}/include/tandem/*.hpp)
    file(READ ${prefix}/include/tandem/tandem.hpp all_in_one)
    foreach(header ${installed_headers})
        get_filename_component(name ${header} NAME)
        if(NOT name STREQUAL "tandem.hpp" AND NOT all_in_one MATCHES "#include \"tandem/${name}\"")
            message(FATAL_ERROR "tandem/tandem.hpp does not include tandem/${name}")
        endif()
        file(STRINGS ${header} includes REGEX "^#include")
        foreach(line ${includes})
            if(NOT line MATCHES "^#include (<[a-z_]+>|<vulkan/vulkan_core\\.h>|\"tandem/[a-z_]+\\.hpp\")$")
                message(FATAL_ERROR "${header}: '${line}' is not a public include")
            endif()
        endforeach()
    endforeach()
endfunction()

# The shared libraries `binary` names (readelf's NEEDED entries), in `out`.
function(needed_libraries binary out)
    execute_process(COMMAND ${READELF} -d ${binary} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${READELF} -d ${binary} failed (${rc})")
    endif()
    string(REGEX MATCHALL "Shared library: \\[[^]]*\\]" needed "${dynamic}")
    set(${out} "${needed}" PARENT_SCOPE)
endfunction()

# Builds and runs the six examples against the package in `prefix`; ARGN: more configure
# arguments. The shared package's examples name libtandem.so and none of Tandem's dependencies
# (those are libtandem.so's own); the static package's name no libtandem. None runs with
# LD_LIBRARY_PATH: the build tree's rpath finds libtandem.so, and examples/sampling installed
# (INSTALL_RPATH_USE_LINK_PATH) finds it from its own.
function(build_examples prefix kind)
    foreach(example embed compute meshes frames sampling postpass)
        set(build ${WORK_DIR}/${kind}-${example})
        run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/${example} -B ${build} -G ${GENERATOR}
            -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${ARGN})
        run(${CMAKE_COMMAND} --build ${build} -j 2)
        needed_libraries(${build}/tandem-${example} needed)
        if(kind STREQUAL "shared")
            if(NOT needed MATCHES "libtandem\\.so\\.")
                message(FATAL_ERROR "tandem-${example} does not link libtandem.so: ${needed}")
            elseif(needed MATCHES "spdlog|fmt|SPIRV|spirv")
                message(FATAL_ERROR "tandem-${example} links a dependency of Tandem's: ${needed}")
            endif()
        elseif(needed MATCHES "libtandem")
            message(FATAL_ERROR "tandem-${example} links a shared libtandem: ${needed}")
        endif()
    endforeach()
    run(${WORK_DIR}/${kind}-embed/tandem-embed)
    # The engine's own compute pass (examples/compute).
    run(${WORK_DIR}/${kind}-compute/tandem-compute)
    # An engine's own meshes (examples/meshes), captured on a worker (the one adapter opened
    # twice) and checked pixel for pixel against the primary's capture of the same snapshots.
    run(${CMAKE_COMMAND} -E env TANDEM_VIRTUAL_DEVICES=2 ${WORK_DIR}/${kind}-meshes/tandem-meshes
        --require-worker)
    # An engine's frames blurred on a worker, rendered into the images Tandem lends (nothing
    # copied), every output exact (examples/frames).
    run(${CMAKE_COMMAND} -E env TANDEM_VIRTUAL_DEVICES=2 ${WORK_DIR}/${kind}-frames/tandem-frames)
    # An engine's own post pass over its colour and depth (a compute task reading its inputs),
    # on a worker, every texel exact (examples/postpass).
    run(${CMAKE_COMMAND} -E env TANDEM_VIRTUAL_DEVICES=2
        ${WORK_DIR}/${kind}-postpass/tandem-postpass)
    # An engine's frame that waits on a lease, copies it into its own image, signals the primary
    # timeline and releases the lease with that value, every pixel exact (examples/sampling),
    # run from where it was installed.
    run(${CMAKE_COMMAND} --install ${WORK_DIR}/${kind}-sampling --prefix ${WORK_DIR}/${kind}-app)
    run(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH TANDEM_VIRTUAL_DEVICES=2
        ${WORK_DIR}/${kind}-app/bin/tandem-sampling)
endfunction()

if(SHARED)
    set(prefix ${WORK_DIR}/shared)
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
    check_headers(${prefix})
    file(GLOB_RECURSE archives ${prefix}/*.a)
    if(archives)
        message(FATAL_ERROR "The shared package installed static libraries: ${archives}")
    endif()
    # The engine's configure finds Tandem and Vulkan, and nothing of what Tandem is built from:
    # find_package of any of these fails there (the static package's find_dependency would).
    set(hidden --no-warn-unused-cli)
    foreach(package spdlog fmt glm nlohmann_json SPIRV-Tools SPIRV-Tools-opt
            spirv_cross_c_shared spirv_cross_core spirv_cross_c)
        list(APPEND hidden -DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON)
    endforeach()
    build_examples(${prefix} shared ${hidden})

    # pkg-config: a program compiled and linked with what tandem.pc gives, nothing else.
    file(GLOB_RECURSE pc_file ${prefix}/*/pkgconfig/tandem.pc)
    if(NOT pc_file)
        message(FATAL_ERROR "The shared package installed no pkgconfig/tandem.pc")
    endif()
    get_filename_component(pc_dir ${pc_file} DIRECTORY)
    set(ENV{PKG_CONFIG_PATH} ${pc_dir})
    execute_process(COMMAND pkg-config --cflags --libs tandem OUTPUT_VARIABLE flags
        RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "pkg-config --cflags --libs tandem failed (${rc})")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    # The prefix is no system one: the program finds libtandem.so by the rpath
    # docs/embedding.md shows, and runs without LD_LIBRARY_PATH.
    execute_process(COMMAND pkg-config --variable=libdir tandem OUTPUT_VARIABLE lib_dir
        RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0 OR NOT EXISTS ${lib_dir}/libtandem.so)
        message(FATAL_ERROR "pkg-config --variable=libdir tandem: '${lib_dir}' (${rc})")
    endif()
    set(client ${WORK_DIR}/pkg-config-client)
    run(${CXX} -std=c++20 ${CMAKE_CURRENT_LIST_DIR}/pkg_config_client.cpp ${flags}
        -Wl,-rpath,${lib_dir} -o ${client})
    run(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${client})
    unset(ENV{PKG_CONFIG_PATH})

    set(prefix ${WORK_DIR}/static)
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component static-package)
else()
    set(prefix ${WORK_DIR}/static)
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
endif()
check_headers(${prefix})
build_examples(${prefix} static)
