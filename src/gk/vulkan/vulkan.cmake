# vulkan.cmake - the Vulkan backend (src/gk/vulkan/), part of gk when GK_VULKAN says so:
# ON (an error when the Vulkan headers, loader or glslc are missing), OFF, or AUTO (the
# default: on when all three are found). The shaders are compiled to SPIR-V by glslc at
# build time and embedded (embed_spirv.cmake); their order is enum gk::vulkan::shader's.
set(GK_VULKAN_ENABLED OFF)
if(NOT GK_VULKAN STREQUAL "OFF")
  find_package(Vulkan QUIET)
  find_program(GK_GLSLC glslc)
  if(Vulkan_FOUND AND GK_GLSLC)
    set(GK_VULKAN_ENABLED ON)
  elseif(GK_VULKAN STREQUAL "ON")
    message(FATAL_ERROR "GK_VULKAN=ON needs the Vulkan headers and loader (libvulkan-dev) and glslc")
  else()
    message(STATUS "gk: no Vulkan backend (GK_VULKAN=AUTO: libvulkan-dev or glslc not found)")
  endif()
endif()

if(GK_VULKAN_ENABLED)
  set(dir ${PROJECT_SOURCE_DIR}/src/gk/vulkan)
  set(out ${CMAKE_BINARY_DIR}/gk-vulkan)
  set(names binary scale mul_mat norm copy glu unary get_rows set_rows soft_max rope flash_attn quantize_act mul_mat_q pad)  # enum gk::vulkan::shader
  set(spvs "")
  # device/block_decode.h: the block formats' decoding, shared with the CUDA kernels
  file(GLOB includes CONFIGURE_DEPENDS ${dir}/shaders/*.glsl ${PROJECT_SOURCE_DIR}/src/gk/device/*.h)
  foreach(name ${names})
    add_custom_command(OUTPUT ${out}/${name}.spv
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
      COMMAND ${GK_GLSLC} --target-env=vulkan1.1 -I ${dir}/shaders -I ${PROJECT_SOURCE_DIR}/src/gk/device ${dir}/shaders/${name}.comp -o ${out}/${name}.spv
      DEPENDS ${dir}/shaders/${name}.comp ${includes}
      COMMENT "glslc ${name}.comp" VERBATIM)
    list(APPEND spvs ${out}/${name}.spv)
  endforeach()
  add_custom_command(OUTPUT ${out}/spirv.cpp
    COMMAND ${CMAKE_COMMAND} -DOUT=${out}/spirv.cpp "-DNAMES=${names}" -DDIR=${out} -P ${dir}/embed_spirv.cmake
    DEPENDS ${spvs} ${dir}/embed_spirv.cmake VERBATIM)
  file(GLOB GK_VULKAN_SOURCES CONFIGURE_DEPENDS ${dir}/*.cpp)
  target_sources(gk PRIVATE ${GK_VULKAN_SOURCES} ${out}/spirv.cpp)
  # Vulkan's idiom `VkXxxInfo info{VK_STRUCTURE_TYPE_...}` leaves the rest zeroed on purpose.
  set_source_files_properties(${GK_VULKAN_SOURCES} PROPERTIES COMPILE_OPTIONS -Wno-missing-field-initializers)
  target_compile_definitions(gk PRIVATE GK_VULKAN)
  target_link_libraries(gk PRIVATE Vulkan::Vulkan)
  message(STATUS "gk: Vulkan backend on (glslc: ${GK_GLSLC})")
endif()
