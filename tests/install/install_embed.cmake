# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -P install_embed.cmake
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "failed (${rc}): ${ARGN}")
    endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
# The installed headers are the public API alone: each includes only the standard library,
# Vulkan's core header and other tandem/ headers (no glm, nothing from src/).
file(GLOB installed_headers ${WORK_DIR}/prefix/include/tandem/*.hpp)
foreach(header ${installed_headers})
    file(STRINGS ${header} includes REGEX "^#include")
    foreach(line ${includes})
        if(NOT line MATCHES "^#include (<[a-z_]+>|<vulkan/vulkan_core\\.h>|\"tandem/[a-z_]+\\.hpp\")$")
            message(FATAL_ERROR "${header}: '${line}' is not a public include")
        endif()
    endforeach()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2)
run(${WORK_DIR}/build/tandem-embed)
# The engine's own compute pass (examples/compute) against the same installed package.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/compute -B ${WORK_DIR}/build-compute -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build-compute -j 2)
run(${WORK_DIR}/build-compute/tandem-compute)
# An engine's own meshes (examples/meshes), captured on a worker (the one adapter opened twice)
# and checked pixel for pixel against the primary's capture of the same snapshots.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/meshes -B ${WORK_DIR}/build-meshes -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build-meshes -j 2)
run(${CMAKE_COMMAND} -E env TANDEM_VIRTUAL_DEVICES=2 ${WORK_DIR}/build-meshes/tandem-meshes
    --require-worker)
