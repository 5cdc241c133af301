# cuda.cmake - the CUDA backend (src/gk/cuda/), part of gk when GK_CUDA=ON (default OFF).
# GK_CUDA_ARCHITECTURES left empty: nvcc is asked what it can target (--list-gpu-arch) and
# the driver what is installed (nvidia-smi); real code is built for the installed GPUs
# (for every target nvcc knows when none is found, so the binary runs on any of them),
# and PTX for the newest target, which later GPUs compile at load time. CMake's "native"
# filter is never used: it drops every target when the build machine has no GPU.
set(GK_CUDA_ARCHITECTURES "" CACHE STRING "CUDA targets as CMAKE_CUDA_ARCHITECTURES (e.g. 80-real;90-virtual); empty: chosen as cuda.cmake says")
if(GK_CUDA)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(archs "${GK_CUDA_ARCHITECTURES}")
  if(NOT archs)
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch OUTPUT_VARIABLE nvcc_archs ERROR_QUIET)
    string(REGEX MATCHALL "compute_[0-9]+" nvcc_archs "${nvcc_archs}")
    string(REPLACE "compute_" "" nvcc_archs "${nvcc_archs}")
    list(SORT nvcc_archs COMPARE NATURAL)
    find_program(GK_NVIDIA_SMI nvidia-smi)
    set(installed "")
    if(GK_NVIDIA_SMI)
      execute_process(COMMAND ${GK_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE caps ERROR_QUIET RESULT_VARIABLE smi_rc)
      if(smi_rc EQUAL 0)
        string(REPLACE "." "" caps "${caps}")
        string(REGEX MATCHALL "[0-9]+" installed "${caps}")
        list(REMOVE_DUPLICATES installed)
      endif()
    endif()
    if(NOT installed)
      set(installed ${nvcc_archs})
    endif()
    foreach(a ${installed})
      list(APPEND archs ${a}-real)
    endforeach()
    list(GET nvcc_archs -1 newest)
    list(APPEND archs ${newest}-virtual)
  endif()
  string(REGEX REPLACE "([0-9]+)-real" "sm_\\1" built_for "${archs}")
  string(REGEX REPLACE "([0-9]+)-virtual" "compute_\\1" built_for "${built_for}")
  string(REPLACE ";" " " built_for "${built_for}")
  file(GLOB GK_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/gk/cuda/*.cpp ${PROJECT_SOURCE_DIR}/src/gk/cuda/*.cu)
  # The backend is an object library inside gk, so that it can be compiled alone
  # (--target gk_cuda: CI, which has nvcc but no GPU).
  add_library(gk_cuda OBJECT ${GK_CUDA_SOURCES})
  target_include_directories(gk_cuda PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(gk_cuda PRIVATE CUDA::cudart)
  # kernels.cu is C++17 (CMake does not know nvcc's C++20 flags everywhere); the rest of gk stays C++20.
  # gk gets the same CUDA properties: with the Makefile generator CMake checks them on the
  # target that takes the CUDA objects too.
  set_target_properties(gk_cuda gk PROPERTIES CUDA_ARCHITECTURES "${archs}" CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  # The kernels round where the CPU's do: no contraction into fma, IEEE division and sqrt.
  target_compile_options(gk_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-fmad=false -prec-div=true -prec-sqrt=true -ftz=false>)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/gk/cuda/device.cpp PROPERTIES
                              COMPILE_DEFINITIONS "GK_CUDA_BUILT_FOR=\"${built_for}\"")
  target_compile_definitions(gk_cuda PRIVATE GK_CUDA)
  target_sources(gk PRIVATE $<TARGET_OBJECTS:gk_cuda>)
  target_compile_definitions(gk PRIVATE GK_CUDA)
  target_link_libraries(gk PRIVATE CUDA::cudart)
  message(STATUS "gk: CUDA backend on, built for ${built_for}")
endif()
