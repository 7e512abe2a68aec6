# CUDA's headers for building gpujit, and the toolkit root it looks in first at run time.
#
# gpujit loads the driver, NVRTC, nvJitLink and CUPTI with dlopen, so the library, the CLI and the
# Python extension need only their headers (cuda.h, nvrtc.h, nvJitLink.h, cupti*.h, nvtx3/):
#   - a CUDA Toolkit >= 12.8 where CMake finds one (CUDAToolkit_ROOT, CUDA_PATH, nvcc on PATH,
#     /usr/local/cuda): its include/ and its major version; or else
#   - NVIDIA's CUDA 13 pip wheels in the Python environment CMake's Python (Python_EXECUTABLE, as
#     scikit-build-core passes it) runs in: `pip install .` brings nvidia-cuda-runtime,
#     nvidia-cuda-crt, nvidia-cuda-nvrtc, nvidia-nvjitlink, nvidia-cuda-cupti and nvidia-nvtx as
#     build requirements (pyproject.toml), whose site-packages/nvidia/cu13/include holds them all; or
#     -DGPUJIT_CUDA_INCLUDE_DIR=DIR naming such a directory.
# The tests and benchmarks link NVRTC and the driver: they need the toolkit.
#
# Sets GPUJIT_CUDA_INCLUDE_DIRS, GPUJIT_CUDA_ROOT (the run-time default root: the toolkit's, else
# /usr/local/cuda) and GPUJIT_CUDA_MAJOR (the CUDA major version tried first at run time).

set(GPUJIT_CUDA_INCLUDE_DIR "" CACHE PATH "CUDA's headers where no CUDA Toolkit is found (NVIDIA's pip wheels' nvidia/cu13/include)")
set(_gpujit_cuda_headers cuda.h crt/host_defines.h nvrtc.h nvJitLink.h cupti.h nvtx3/nvToolsExt.h)

if(NOT GPUJIT_CUDA_INCLUDE_DIR)
  find_package(CUDAToolkit 12.8 QUIET)
endif()
if(CUDAToolkit_FOUND AND NOT TARGET CUDA::nvrtc)
  message(FATAL_ERROR "the CUDA Toolkit at ${CUDAToolkit_BIN_DIR}/.. has no NVRTC")
endif()

if(CUDAToolkit_FOUND)
  find_path(GPUJIT_NVJITLINK_INCLUDE nvJitLink.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
  set(GPUJIT_CUDA_INCLUDE_DIRS ${CUDAToolkit_INCLUDE_DIRS})
  get_filename_component(GPUJIT_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  set(GPUJIT_CUDA_MAJOR ${CUDAToolkit_VERSION_MAJOR})
  message(STATUS "CUDA headers: the CUDA Toolkit ${CUDAToolkit_VERSION} at ${GPUJIT_CUDA_ROOT}")
else()
  if(GPUJIT_TESTS OR GPUJIT_BENCH)
    message(FATAL_ERROR "no CUDA Toolkit >= 12.8 found: the tests and benchmarks link NVRTC and the driver "
      "(set CUDAToolkit_ROOT or CUDA_PATH, or configure with -DGPUJIT_TESTS=OFF -DGPUJIT_BENCH=OFF to build "
      "against NVIDIA's pip wheels' headers)")
  endif()
  # Where NVIDIA's wheels put the headers: nvidia/cu13/include under a directory of sys.path.
  set(_hints ${GPUJIT_CUDA_INCLUDE_DIR})
  if(NOT GPUJIT_CUDA_INCLUDE_DIR)
    if(DEFINED Python_EXECUTABLE)
      set(_py ${Python_EXECUTABLE})
    else()
      find_program(_py NAMES python3 python)
    endif()
    if(_py)
      execute_process(COMMAND ${_py} -c
        "import os, sys; print(';'.join(os.path.join(p, 'nvidia', 'cu13', 'include') for p in sys.path if p and os.path.isdir(os.path.join(p, 'nvidia', 'cu13', 'include'))))"
        OUTPUT_VARIABLE _hints OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  set(GPUJIT_CUDA_INCLUDE_DIRS "")
  set(_missing "")
  foreach(h IN LISTS _gpujit_cuda_headers)
    string(MAKE_C_IDENTIFIER "GPUJIT_CUDA_HEADER_${h}" _var)
    find_path(${_var} ${h} HINTS ${_hints} NO_DEFAULT_PATH)
    if(${_var})
      list(APPEND GPUJIT_CUDA_INCLUDE_DIRS ${${_var}})
    else()
      list(APPEND _missing ${h})
    endif()
  endforeach()
  if(_missing)
    message(FATAL_ERROR "no CUDA Toolkit >= 12.8 found, and no ${_missing} in NVIDIA's pip wheels "
      "(looked in: ${_hints}). Either install the toolkit (set CUDAToolkit_ROOT or CUDA_PATH), or build with "
      "`pip install .`, whose build requirements are those wheels, or pip install nvidia-cuda-runtime "
      "nvidia-cuda-crt nvidia-cuda-nvrtc nvidia-nvjitlink nvidia-cuda-cupti nvidia-nvtx (13.x) and point "
      "-DGPUJIT_CUDA_INCLUDE_DIR at their site-packages/nvidia/cu13/include")
  endif()
  list(REMOVE_DUPLICATES GPUJIT_CUDA_INCLUDE_DIRS)
  file(STRINGS "${GPUJIT_CUDA_HEADER_cuda_h}/cuda.h" _v REGEX "^#define CUDA_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CUDA_VERSION ([0-9]+).*" "\\1" _v "${_v}")
  math(EXPR GPUJIT_CUDA_MAJOR "${_v} / 1000")
  if(GPUJIT_CUDA_MAJOR LESS 12)
    message(FATAL_ERROR "the CUDA headers at ${GPUJIT_CUDA_HEADER_cuda_h} are CUDA ${_v}: gpujit needs 12.8 or newer")
  endif()
  set(GPUJIT_CUDA_ROOT /usr/local/cuda) # no toolkit here: the usual root, then NVIDIA's wheels, at run time
  message(STATUS "CUDA headers: NVIDIA's pip wheels (CUDA_VERSION ${_v}) at ${GPUJIT_CUDA_INCLUDE_DIRS}")
endif()
