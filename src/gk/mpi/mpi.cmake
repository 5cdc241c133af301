# mpi.cmake - the MPI backend (src/gk/mpi/, include/gk/gk-mpi.h), part of gk when GK_MPI
# says so: ON (an error when MPI's C bindings are missing), OFF, or AUTO (the default: on
# when find_package(MPI) finds them; Debian: libopenmpi-dev openmpi-bin). Without it,
# absent.cpp gives gk-mpi.h's functions, which report that the build has no MPI.
set(GK_MPI AUTO CACHE STRING "The MPI backend: ON, OFF or AUTO (on when MPI's C bindings are found)")
set(GK_MPI_ENABLED OFF)
if(NOT GK_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(GK_MPI_ENABLED ON)
  elseif(GK_MPI STREQUAL "ON")
    message(FATAL_ERROR "GK_MPI=ON needs MPI's C bindings (libopenmpi-dev)")
  else()
    message(STATUS "gk: no MPI backend (GK_MPI=AUTO: MPI's C bindings not found)")
  endif()
endif()

set(dir ${PROJECT_SOURCE_DIR}/src/gk/mpi)
if(GK_MPI_ENABLED)
  target_sources(gk PRIVATE ${dir}/comm.cpp ${dir}/backend.cpp)
  target_link_libraries(gk PRIVATE MPI::MPI_C)
  # The C API only: mpi.h would otherwise pull in the (removed from MPI-3) C++ bindings.
  target_compile_definitions(gk PRIVATE GK_MPI OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
  # mpiexec for the tests (tests/run/gk-run-mpi.sh).
  set(GK_MPIEXEC ${MPIEXEC_EXECUTABLE})
  message(STATUS "gk: MPI backend on (${MPI_C_LIBRARY_NAMES}, ${MPIEXEC_EXECUTABLE})")
else()
  target_sources(gk PRIVATE ${dir}/absent.cpp)
  set(GK_MPIEXEC "")
endif()
