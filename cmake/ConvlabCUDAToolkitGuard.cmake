# Include before find_package(CUDAToolkit) / find_dependency(CUDAToolkit). Installed with
# the package: the build and every consumer of the installed config need it alike.
#
# CMake 3.25's FindCUDAToolkit (Debian 12's stock cmake-data) sets a DEPRECATION property
# on CUDA::nvToolsExt without checking that the target exists, so configuring stops with
# "set_property could not find TARGET CUDA::nvToolsExt" whenever the toolkit has no
# libnvToolsExt, as CUDA 12.9+ and 13 do (NVTX is header-only nvtx3 there). The module only
# makes that target when it finds the library, so an empty stand-in made beforehand, for a
# toolkit without the library only, gives the property a target and changes nothing else
# (nothing links it: NVTX3 needs no library).
if(NOT TARGET CUDA::nvToolsExt)
  # Where FindCUDAToolkit will look, in its order: the CUDA compiler in use, the hints,
  # nvcc on PATH, the default prefix.
  set(_convlab_cuda_roots)
  if(CMAKE_CUDA_COMPILER)
    get_filename_component(_convlab_cuda_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    list(APPEND _convlab_cuda_roots "${_convlab_cuda_bin}/..")
  endif()
  find_program(_convlab_nvcc nvcc HINTS ${CUDAToolkit_ROOT} ENV CUDAToolkit_ROOT ENV CUDA_PATH
               PATH_SUFFIXES bin PATHS /usr/local/cuda/bin NO_CACHE)
  if(_convlab_nvcc)
    get_filename_component(_convlab_cuda_bin "${_convlab_nvcc}" REALPATH)
    get_filename_component(_convlab_cuda_bin "${_convlab_cuda_bin}" DIRECTORY)
    list(APPEND _convlab_cuda_roots "${_convlab_cuda_bin}/..")
  endif()
  if(_convlab_cuda_roots)
    find_library(_convlab_nvtoolsext NAMES nvToolsExt nvToolsExt64 nvToolsExt64_1
                 HINTS ${_convlab_cuda_roots}
                 PATH_SUFFIXES lib64 lib targets/x86_64-linux/lib targets/sbsa-linux/lib
                 NO_CACHE)
    if(NOT _convlab_nvtoolsext)
      add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    endif()
  endif()
  unset(_convlab_cuda_roots)
  unset(_convlab_cuda_bin)
  unset(_convlab_nvcc)
  unset(_convlab_nvtoolsext)
endif()
