# Finds cuDNN in CUDNN_PATH (cache variable or environment), the CUDA toolkit folders and the
# system prefixes; reads its version from cudnn_version.h.
# Defines CUDNN_FOUND, CUDNN_VERSION and the imported target CUDNN::cudnn.
#
# Which copy wins: CUDNN_PATH, when given, is searched first and alone, so nothing on
# CMAKE_PREFIX_PATH or in the system folders can shadow it. Every search takes the folders in
# order and, in each, both names (NAMES_PER_DIR): otherwise the plain name `cudnn` would be
# looked for in every folder before `libcudnn.so.9`, and an older libcudnn.so later in the
# order would beat the cuDNN 9 wheel, which ships only libcudnn.so.9.
set(_cudnn_user ${CUDNN_PATH} $ENV{CUDNN_PATH})
if(_cudnn_user)
  find_path(CUDNN_INCLUDE_DIR cudnn_version.h PATHS ${_cudnn_user} PATH_SUFFIXES include
            NO_DEFAULT_PATH)
  find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR PATHS ${_cudnn_user}
               PATH_SUFFIXES lib lib64 lib/x64 NO_DEFAULT_PATH)
endif()
set(_cudnn_hints ${_cudnn_user})
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _cudnn_hints ${CUDAToolkit_LIBRARY_ROOT})
endif()
if(CUDAToolkit_INCLUDE_DIRS)
  list(APPEND _cudnn_hints ${CUDAToolkit_INCLUDE_DIRS}/..)
endif()
find_path(CUDNN_INCLUDE_DIR cudnn_version.h HINTS ${_cudnn_hints} PATH_SUFFIXES include)
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR HINTS ${_cudnn_hints}
             PATH_SUFFIXES lib lib64 lib/x64)
if(CUDNN_INCLUDE_DIR AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  file(READ "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_header)
  string(REGEX MATCH "define CUDNN_MAJOR +([0-9]+)" _ "${_cudnn_header}")
  set(_major ${CMAKE_MATCH_1})
  string(REGEX MATCH "define CUDNN_MINOR +([0-9]+)" _ "${_cudnn_header}")
  set(_minor ${CMAKE_MATCH_1})
  string(REGEX MATCH "define CUDNN_PATCHLEVEL +([0-9]+)" _ "${_cudnn_header}")
  set(_patch ${CMAKE_MATCH_1})
  set(CUDNN_VERSION "${_major}.${_minor}.${_patch}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
                                  VERSION_VAR CUDNN_VERSION)
if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
