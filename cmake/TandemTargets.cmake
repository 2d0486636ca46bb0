# Shared compile settings and the helper that declares one library per layer.

add_library(tandem_warnings INTERFACE)
target_compile_options(tandem_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion
    -Wno-sign-conversion -Wimplicit-fallthrough
    # `VkFoo info{VK_STRUCTURE_TYPE_FOO}` value-initialises the rest: the Vulkan idiom.
    -Wno-missing-field-initializers)
if(TANDEM_WERROR)
    target_compile_options(tandem_warnings INTERFACE -Werror)
endif()

if(TANDEM_SANITIZE STREQUAL "address")
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
        -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
elseif(TANDEM_SANITIZE STREQUAL "thread")
    add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
elseif(NOT TANDEM_SANITIZE STREQUAL "")
    message(FATAL_ERROR "TANDEM_SANITIZE must be empty, 'address' or 'thread'")
endif()

# tandem_add_layer(NAME SOURCES... DEPENDS targets...)
# Declares static library tandem_NAME with alias tandem::NAME, built with the project warnings.
function(tandem_add_layer name)
    cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
    add_library(tandem_${name} STATIC ${ARG_SOURCES})
    add_library(tandem::${name} ALIAS tandem_${name})
    target_include_directories(tandem_${name}
        PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
               $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
               $<INSTALL_INTERFACE:include>)
    target_link_libraries(tandem_${name} PUBLIC ${ARG_DEPENDS}
        PRIVATE $<BUILD_INTERFACE:tandem_warnings>)
    set_target_properties(tandem_${name} PROPERTIES EXPORT_NAME ${name})
endfunction()
